//! End-to-end tests across the workspace.
