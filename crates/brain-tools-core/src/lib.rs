//! Tool bindings, host configuration and the call pipeline every Brain tool runs inside.
