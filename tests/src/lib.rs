//! Support code for the end-to-end tests: starting real peer servers.
