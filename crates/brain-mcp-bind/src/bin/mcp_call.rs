//! `mcp-call`: run one MCP tool binding from the shell. See `mcp-call -h`.

fn main() {
    brain_mcp_bind::cmd::call::program()
}
