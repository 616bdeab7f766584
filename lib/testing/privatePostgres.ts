import { execFile, execFileSync, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { appendFile, chown, mkdir, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * A throwaway PostgreSQL cluster of a test's own, on a free port, that the test may stop (as a
 * crash or outage) and start again without disturbing the shared test server.
 */
export interface PrivatePostgres {
  /** postgres://postgres@127.0.0.1:<port>/<database> (trust auth, no password). */
  url(database?: string): string;
  port: number;
  dataDir: string;
  running(): boolean;
  /** Stops the server: `immediate` (the default) is a crash, `fast` a clean shutdown. */
  stop(mode?: "immediate" | "fast"): Promise<void>;
  /** Starts it again on the same port and data (after an immediate stop: crash recovery). */
  start(): Promise<void>;
  /**
   * Freezes the server (SIGSTOP to the postmaster and its children): connections stay open but
   * nothing answers, as in a network partition. thaw() lets it go on where it was.
   */
  freeze(): void;
  thaw(): void;
  /** Stops it and removes its data directory. */
  destroy(): Promise<void>;
}

/** Why no private cluster could be had: the caller skips, saying so. */
export class PrivatePostgresUnavailable extends Error {
  constructor(reason: string, options?: ErrorOptions) {
    super(reason, options);
    this.name = "PrivatePostgresUnavailable";
  }
}

/** The directory holding initdb, pg_ctl and postgres, or undefined. */
export function findPostgresBinaries(): string | undefined {
  const candidates: string[] = [];
  if (process.env.PG_BINDIR) candidates.push(process.env.PG_BINDIR);
  try {
    candidates.push(execFileSync("pg_config", ["--bindir"], { encoding: "utf8" }).trim());
  } catch {
    // no pg_config on PATH
  }
  const versions = (() => {
    try {
      return readdirSync("/usr/lib/postgresql");
    } catch {
      return [];
    }
  })();
  candidates.push(
    ...versions
      .sort((a, b) => (Number.parseInt(b, 10) || 0) - (Number.parseInt(a, 10) || 0))
      .map((v) => path.join("/usr/lib/postgresql", v, "bin")),
  );
  return candidates.find((dir) =>
    ["initdb", "pg_ctl", "postgres"].every((bin) => existsSync(path.join(dir, bin))),
  );
}

/**
 * initdb and postgres refuse to run as root: as root, they run as the `postgres` OS user (via
 * runuser), in a directory that user owns.
 */
function asUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
    return { uid, gid };
  } catch (err) {
    throw new PrivatePostgresUnavailable(
      "running as root and there is no `postgres` OS user to run the server as",
      { cause: err },
    );
  }
}

function command(
  user: { uid: number } | undefined,
  bin: string,
  args: string[],
): [string, string[]] {
  return user ? ["runuser", ["-u", "postgres", "--", bin, ...args]] : [bin, args];
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

// Every cluster this process started and has not destroyed, stopped at exit whatever happens.
const live = new Map<string, () => void>();
let exitHookInstalled = false;
function installExitHook() {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const cleanup of live.values()) cleanup();
  });
}

/**
 * Starts a private cluster: initdb in a temporary directory (trust auth, fsync off, small
 * buffers; commits stay synchronous), listening on 127.0.0.1 on a free port, its socket in the
 * data directory. Throws PrivatePostgresUnavailable when the binaries are missing or the server
 * cannot start.
 *
 * It is stopped and removed by destroy(), at the process's exit, and — should the process be
 * killed outright — by a small watchdog that waits for this process to end.
 */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bindir = findPostgresBinaries();
  if (!bindir) {
    throw new PrivatePostgresUnavailable(
      "no PostgreSQL server binaries (initdb, pg_ctl, postgres) were found via PG_BINDIR, " +
        "`pg_config --bindir` or /usr/lib/postgresql/*/bin",
    );
  }
  const user = asUser();
  const root = await mkdtemp(path.join(tmpdir(), "ww-pg-"));
  const dataDir = path.join(root, "data");
  const logFile = path.join(root, "server.log");
  const pgCtl = path.join(bindir, "pg_ctl");
  let watchdog: ReturnType<typeof spawn> | undefined;
  let running = false;

  const removeRoot = () => rmSync(root, { recursive: true, force: true });
  const stopNow = () => {
    if (!running) return;
    try {
      const [cmd, args] = command(user, pgCtl, ["stop", "-D", dataDir, "-m", "immediate", "-w"]);
      execFileSync(cmd, args, { stdio: "ignore", timeout: 30_000 });
    } catch {
      // already gone
    }
    running = false;
  };
  const frozen: number[] = [];
  const thaw = () => {
    for (const pid of frozen.splice(0)) {
      try {
        process.kill(pid, "SIGCONT");
      } catch {
        // gone
      }
    }
  };
  installExitHook();
  live.set(root, () => {
    thaw();
    stopNow();
    removeRoot();
  });

  try {
    if (user) {
      await chown(root, user.uid, user.gid);
    }
    await mkdir(dataDir, { mode: 0o700 });
    if (user) await chown(dataDir, user.uid, user.gid);
    const [initCmd, initArgs] = command(user, path.join(bindir, "initdb"), [
      "-D",
      dataDir,
      "-U",
      "postgres",
      "--auth=trust",
      "--encoding=UTF8",
      "--no-locale",
      "--no-sync",
    ]);
    await run(initCmd, initArgs, { timeout: 120_000 });
    const port = await freePort();
    await appendFile(
      path.join(dataDir, "postgresql.conf"),
      [
        "",
        "# a throwaway test cluster (lib/testing/privatePostgres.ts)",
        "listen_addresses = '127.0.0.1'",
        `port = ${port}`,
        `unix_socket_directories = '${dataDir}'`,
        // fsync off is safe here: a stopped or crashed server (not machine) loses nothing the OS
        // was handed. synchronous_commit must stay on: off, an immediate stop loses commits the
        // clients were told about, which a real outage would not.
        "fsync = off",
        "full_page_writes = off",
        "shared_buffers = 16MB",
        "max_connections = 60",
        "log_min_messages = warning",
        "",
      ].join("\n"),
    );

    const start = async () => {
      if (running) return;
      const [cmd, args] = command(user, pgCtl, [
        "start",
        "-D",
        dataDir,
        "-l",
        logFile,
        "-w",
        "-t",
        "60",
      ]);
      try {
        await run(cmd, args, { timeout: 90_000 });
      } catch (err) {
        const log = await run("tail", ["-n", "20", logFile]).catch(() => ({ stdout: "" }));
        throw new PrivatePostgresUnavailable(
          `pg_ctl start failed: ${(err as Error).message.trim()}\n${log.stdout}`,
          { cause: err },
        );
      }
      running = true;
    };
    const stop = async (mode: "immediate" | "fast" = "immediate") => {
      if (!running) return;
      thaw();
      const [cmd, args] = command(user, pgCtl, ["stop", "-D", dataDir, "-m", mode, "-w"]);
      await run(cmd, args, { timeout: 60_000 });
      running = false;
    };

    await start();
    // Should this process be killed (SIGKILL, a crashed test run), no exit hook runs: a detached
    // watchdog waits for it to end and then stops the server and removes its files.
    const [stopCmd, stopArgs] = command(user, pgCtl, ["stop", "-D", dataDir, "-m", "immediate"]);
    watchdog = spawn(
      "sh",
      [
        "-c",
        // (a frozen server is let go first, or it would never act on the stop)
        'while kill -0 "$1" 2>/dev/null; do sleep 1; done; shift; ' +
          'pm=$(head -n 1 "$ROOT/data/postmaster.pid" 2>/dev/null) && ' +
          '{ kill -CONT "$pm"; pkill -CONT -P "$pm"; }; ' +
          '"$@" >/dev/null 2>&1; sleep 2; rm -rf "$ROOT"',
        "watchdog",
        String(process.pid),
        stopCmd,
        ...stopArgs,
      ],
      { detached: true, stdio: "ignore", env: { ...process.env, ROOT: root } },
    );
    watchdog.unref();

    return {
      freeze: () => {
        if (!running) throw new Error("the server is not running");
        const postmaster = Number(
          readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n")[0],
        );
        const children = readdirSync("/proc")
          .filter((name) => /^\d+$/.test(name))
          .map(Number)
          .filter((pid) => {
            try {
              // /proc/<pid>/stat: "pid (comm) state ppid …"; comm may hold spaces.
              const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
              return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === postmaster;
            } catch {
              return false;
            }
          });
        for (const pid of [postmaster, ...children]) {
          process.kill(pid, "SIGSTOP");
          frozen.push(pid);
        }
      },
      thaw,
      url: (database = "postgres") => `postgres://postgres@127.0.0.1:${port}/${database}`,
      port,
      dataDir,
      running: () => running,
      stop,
      start,
      destroy: async () => {
        thaw();
        await stop("immediate").catch(() => stopNow());
        stopNow();
        live.delete(root);
        if (watchdog?.pid && watchdog.exitCode === null) {
          try {
            process.kill(watchdog.pid);
          } catch {
            // already ended
          }
        }
        await rm(root, { recursive: true, force: true });
      },
    };
  } catch (err) {
    stopNow();
    live.delete(root);
    removeRoot();
    if (err instanceof PrivatePostgresUnavailable) throw err;
    throw new PrivatePostgresUnavailable(
      `could not create a cluster: ${(err as Error).message?.trim() ?? err}`,
      { cause: err },
    );
  }
}

/**
 * A private cluster, or null after saying loudly why `what` is skipped. Use at the top of a test
 * file: `const pg = await privatePostgresOrSkip("…"); describe.skipIf(!pg)(…)`.
 */
export async function privatePostgresOrSkip(what: string): Promise<PrivatePostgres | null> {
  try {
    return await startPrivatePostgres();
  } catch (err) {
    if (!(err instanceof PrivatePostgresUnavailable)) throw err;
    console.warn(
      `\n⚠ SKIPPED: ${what} needs a private PostgreSQL cluster it can stop and start, ` +
        `because ${err.message}\n`,
    );
    return null;
  }
}
