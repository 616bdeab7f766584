-- A source's folder, as feed readers file subscriptions (OPML import and export,
-- workers/sources/opml): the names of the outlines it sits in, outermost first, joined with "/"
-- ("News/Tech"); a "/" or "\" inside one name is written "\/" or "\\" (workers/sources/opml/
-- folder.ts), so a Feedly folder called "Science/Space" stays one folder. NULL: at the top, which
-- is where every source was before (and where a sources-file source stays unless the file names
-- a folder).
--
-- 200 characters, as a source's name: the readers' exports nest two to four levels of short
-- names (the longest path in the fixtures is 15 characters), so 200 is a made-up file, refused
-- by the import by line before it gets here. An empty string is not a folder.
ALTER TABLE "sources"
    ADD COLUMN "folder" TEXT,
    ADD CONSTRAINT "sources_folder_check" CHECK (char_length("folder") BETWEEN 1 AND 200);
