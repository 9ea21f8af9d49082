//! The MCP binding: tool discovery and the call path from a Brain session to an MCP server.
