import { textProblem } from "@/lib/validation";

/**
 * A source's folder as it is stored (sources.folder): the names of the folders it is filed in,
 * outermost first, joined with "/" ("News/Tech"), null at the top. Readers nest (NewsBlur) or
 * keep one level (Feedly, Inoreader, Miniflux, FreshRSS), and any of them may call one folder
 * "Science/Space"; a "/" or "\" inside a name is therefore written "\/" or "\\", so the path
 * splits back into exactly the names it was made of and an export nests them as they were.
 */

/**
 * 200 characters, as a source's name (and the column's CHECK): the readers' exports nest two to
 * four levels of short names, so a longer path is a made-up file, refused with its line.
 */
export const MAX_FOLDER_LENGTH = 200;

const escapeName = (name: string) => name.replace(/[\\/]/g, (c) => `\\${c}`);

/** ["News", "Tech"] → "News/Tech"; [] → null (the top). */
export function folderPath(names: readonly string[]): string | null {
  return names.length === 0 ? null : names.map(escapeName).join("/");
}

/** "News/Tech" → ["News", "Tech"]; "Science\/Space" → ["Science/Space"]; null → []. */
export function folderNames(path: string | null | undefined): string[] {
  if (!path) return [];
  const names: string[] = [];
  let name = "";
  for (let i = 0; i < path.length; i++) {
    const c = path[i] as string;
    if (c === "\\" && i + 1 < path.length) {
      name += path[++i];
    } else if (c === "/") {
      names.push(name);
      name = "";
    } else {
      name += c;
    }
  }
  names.push(name);
  return names;
}

/**
 * Why a path cannot be stored as a folder, or null when it can: too long, an empty or
 * space-padded name ("News//Tech", "News/ Tech"), or text PostgreSQL refuses.
 */
export function folderProblem(path: string): string | null {
  if (path.length > MAX_FOLDER_LENGTH) {
    return `is ${path.length} characters long (at most ${MAX_FOLDER_LENGTH}, "/" between names included)`;
  }
  const text = textProblem(path);
  if (text) return text;
  const names = folderNames(path);
  if (folderPath(names) !== path) {
    return 'has a "\\" that escapes neither "/" nor "\\" (a backslash in a name is written "\\\\")';
  }
  for (const name of names) {
    if (name.trim() === "")
      return 'has an empty folder name (nothing between two "/", or at an end)';
    if (name !== name.trim()) return `has a folder name with spaces around it ("${name}")`;
  }
  return null;
}
