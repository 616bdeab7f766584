import { UsageError } from "../usage";
import * as exportOpml from "./sources/exportOpml";
import * as importOpml from "./sources/importOpml";

// `sources <subcommand>`: each subcommand is a module in cli/commands/sources/ with its own
// usage and run, as the top-level commands are.
const SUBCOMMANDS: Record<string, { usage: string; run(args: string[]): Promise<number> }> = {
  "import-opml": importOpml,
  "export-opml": exportOpml,
};

export const usage = Object.values(SUBCOMMANDS)
  .map((s) => s.usage)
  .join("\n  ");

export async function run(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const names = Object.keys(SUBCOMMANDS).join(", ");
  if (sub === undefined) throw new UsageError(`sources needs one of ${names}`);
  const command = SUBCOMMANDS[sub];
  if (!command) throw new UsageError(`sources: unknown subcommand "${sub}" (one of ${names})`);
  return command.run(rest);
}
