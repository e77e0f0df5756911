//! Starting an agent over OpenSSH: `sizeup agent --stdio` on the host, its link the SSH
//! channel's stdin and stdout (SSH's login is the proof; no port is opened). The host's
//! own sizeup is used when its PATH has this release, else this binary is copied there,
//! and the copy removes itself as it starts. Closing stdin ends the agent, and the
//! kernel closes it when this process ends, however it ends.

use std::process::Stdio;
use tokio::io::AsyncWriteExt;
use tokio::process::{Child, Command};

type Reader = Box<dyn tokio::io::AsyncRead + Unpin + Send>;
type Writer = Box<dyn tokio::io::AsyncWrite + Unpin + Send>;

/// The ssh command: `SIZEUP_SSH_COMMAND` (split on white space, e.g. `ssh -F cfg -p
/// 2222`), else `ssh`; always in batch mode (no password prompt on the terminal).
fn ssh(dest: &str) -> Command {
    let given = std::env::var("SIZEUP_SSH_COMMAND").unwrap_or_default();
    let mut words: Vec<String> = given.split_whitespace().map(String::from).collect();
    if words.is_empty() {
        words.push("ssh".into());
    }
    let mut c = Command::new(&words[0]);
    c.args(&words[1..]).args(["-o", "BatchMode=yes", "--", dest]);
    c
}

fn failed(dest: &str, what: &str, out: &std::process::Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr);
    let last = err.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("no message").trim().to_string();
    format!("--agents-ssh {dest}: {what} failed ({last})")
}

/// Starts `sizeup agent --stdio` on `dest`; says which binary runs there.
pub async fn start(dest: &str, say: &dyn Fn(&str)) -> Result<(Reader, Writer, Child), String> {
    if dest.is_empty() || dest.starts_with('-') || dest.contains(char::is_whitespace) {
        return Err(format!("--agents-ssh '{dest}': give each host as USER@HOST or HOST"));
    }
    let ours = format!("sizeup {}", env!("CARGO_PKG_VERSION"));
    let probe = ssh(dest)
        .arg("p=$(command -v sizeup) && echo \"$p\" && \"$p\" --version")
        .stdin(Stdio::null())
        .output()
        .await
        .map_err(|e| format!("--agents-ssh {dest}: cannot run ssh: {e}"))?;
    if probe.status.code() == Some(255) {
        return Err(failed(dest, "logging in", &probe));
    }
    let text = String::from_utf8_lossy(&probe.stdout);
    let mut lines = text.lines();
    let (path, version) = (lines.next().unwrap_or("").trim(), lines.next().unwrap_or("").trim());
    let (exe, remove) = if probe.status.success() && version == ours {
        say(&format!("agent {dest}: running {path} from its PATH ({version})"));
        (path.to_string(), false)
    } else {
        // SIZEUP_AGENT_BINARY: the binary to copy where this process is not sizeup's
        // own (the tests run sizeup inside their harness).
        let me = match std::env::var_os("SIZEUP_AGENT_BINARY") {
            Some(p) => std::path::PathBuf::from(p),
            None => std::env::current_exe().map_err(|e| format!("cannot find this sizeup's binary: {e}"))?,
        };
        let bytes = tokio::fs::read(&me).await.map_err(|e| format!("cannot read {}: {e}", me.display()))?;
        let remote = format!("/tmp/sizeup-agent-{}-{}", std::process::id(), nonce8());
        let mut copy = ssh(dest)
            .arg(format!("umask 077 && cat > {remote} && chmod 700 {remote}"))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("--agents-ssh {dest}: cannot run ssh: {e}"))?;
        let mut stdin = copy.stdin.take().expect("piped");
        stdin.write_all(&bytes).await.map_err(|e| format!("--agents-ssh {dest}: copying sizeup failed: {e}"))?;
        drop(stdin);
        let out = copy.wait_with_output().await.map_err(|e| format!("--agents-ssh {dest}: {e}"))?;
        if !out.status.success() {
            return Err(failed(dest, "copying sizeup", &out));
        }
        let why = match path.is_empty() {
            true => "its PATH has no sizeup".to_string(),
            false => format!("its {path} is {}", if version.is_empty() { "not runnable" } else { version }),
        };
        say(&format!("agent {dest}: copied this sizeup ({ours}) to {remote}, since {why}; the copy removes itself"));
        (remote, true)
    };
    let mut cmd = ssh(dest);
    cmd.arg(format!("exec {exe} agent --stdio{}", if remove { " --remove-self" } else { "" }));
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("--agents-ssh {dest}: cannot run ssh: {e}"))?;
    let r: Reader = Box::new(child.stdout.take().expect("piped"));
    let w: Writer = Box::new(child.stdin.take().expect("piped"));
    Ok((r, w, child))
}

fn nonce8() -> String {
    super::wire::nonce()[..8].to_string()
}
