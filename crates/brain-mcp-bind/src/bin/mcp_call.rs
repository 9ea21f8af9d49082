//! `mcp-call`: run one MCP tool binding from the shell. See `mcp-call -h`.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code =
        brain_mcp_bind::cmd::call::main(&args, &mut std::io::stdout(), &mut std::io::stderr());
    std::process::exit(code);
}
