// OPML import and export of sources: parse → plan (pure, for a dry run or a page's preview) →
// apply (the database); export reads the sources and writes OPML 2.0. See README.md.
export { type ApplyResult, applyImport, existingSources } from "./apply";
export { buildOpml, exportSources, type OpmlExportEntry } from "./export";
export { folderNames, folderPath, folderProblem, MAX_FOLDER_LENGTH } from "./folder";
export { type OpmlDocument, type OpmlFeed, parseOpml } from "./parse";
export {
  type ExistingSource,
  type ImportPlan,
  importedSourceId,
  MAX_IMPORTED_SOURCES,
  type PlannedSource,
  planImport,
} from "./plan";
export { OPML_PROBLEM_SEVERITY, type OpmlProblem, type OpmlProblemCode } from "./problems";
