import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { UsageError } from "./usage";

// Each command is a module in cli/commands/<name>.ts exporting `usage` and `run(args)`, which
// resolves to the exit code. Adding a command is adding a file.
const COMMANDS_DIR = path.join(import.meta.dirname, "commands");

interface Command {
  usage: string;
  run(args: string[]): Promise<number>;
}

function commandNames(): string[] {
  return readdirSync(COMMANDS_DIR)
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))
    .map((f) => f.slice(0, -3))
    .sort();
}

async function load(name: string): Promise<Command> {
  return (await import(path.join(COMMANDS_DIR, `${name}.ts`))) as Command;
}

async function usage(): Promise<string> {
  const lines = await Promise.all(commandNames().map(async (n) => `  ${(await load(n)).usage}`));
  return `usage: npm run -s cli -- <command>\n\n${lines.join("\n")}`;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "help" || name === "--help") {
    console.log(await usage());
    return name === undefined ? 2 : 0;
  }
  if (!/^[a-z][a-z0-9-]*$/.test(name) || !existsSync(path.join(COMMANDS_DIR, `${name}.ts`))) {
    throw new UsageError(`unknown command "${name}"`);
  }
  return (await load(name)).run(rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  async (err: unknown) => {
    if (err instanceof UsageError) {
      console.error(`cli: ${err.message}\n\n${await usage()}`);
      process.exitCode = 2;
    } else {
      console.error(`cli: ${(err as Error).message ?? err}`);
      process.exitCode = 1;
    }
  },
);
