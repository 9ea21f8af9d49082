//! `mcp-tools`: discover an MCP server's tools and print Brain bindings. See `mcp-tools -h`.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code =
        brain_mcp_bind::cmd::tools::main(&args, &mut std::io::stdout(), &mut std::io::stderr());
    std::process::exit(code);
}
