//! Streamable HTTP and stdio transports for MCP clients.
