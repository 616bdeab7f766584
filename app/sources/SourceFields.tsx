"use client";

import styles from "./sources.module.css";

// Fields the add form and a source's settings share, so both say the same thing.

export function FolderField({
  value,
  onChange,
}: {
  value: string;
  onChange: (folder: string) => void;
}) {
  return (
    <label>
      Folder
      <input
        value={value}
        onChange={(e) => onChange(e.target.value)}
        placeholder="News/Tech"
        maxLength={200}
      />
    </label>
  );
}

export type Render = "http" | "browser";

/** How a page source is read: as served, or rendered in a browser (decision 035). */
export function RenderField({
  value,
  onChange,
}: {
  value: Render;
  onChange: (render: Render) => void;
}) {
  return (
    <label className={styles.wide}>
      Read the page
      <select
        value={value}
        onChange={(e) => onChange(e.target.value === "browser" ? "browser" : "http")}
      >
        <option value="http">as served (HTTP)</option>
        <option value="browser">rendered in a browser (runs its scripts; costs CPU)</option>
      </select>
    </label>
  );
}
