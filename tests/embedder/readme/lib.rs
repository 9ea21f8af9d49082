//! Nothing of its own: the package exists to build the examples with the README's
//! dependency lines and nothing else.
