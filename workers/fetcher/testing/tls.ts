import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/** A throwaway self-signed certificate for `name`, made with the system openssl at `bin`. */
export function selfSignedCert(bin: string, name: string): { key: Buffer; cert: Buffer } {
  const dir = mkdtempSync(path.join(tmpdir(), "ww-tls-"));
  try {
    execFileSync(
      bin,
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-subj",
        `/CN=${name}`,
        "-addext",
        `subjectAltName=DNS:${name}`,
        "-keyout",
        path.join(dir, "k.pem"),
        "-out",
        path.join(dir, "c.pem"),
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    return {
      key: readFileSync(path.join(dir, "k.pem")),
      cert: readFileSync(path.join(dir, "c.pem")),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
