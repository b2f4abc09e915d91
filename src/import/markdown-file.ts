// Reading one Markdown file as text: bounded, valid UTF-8, storable.
import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs'
import { BadFileError } from './bad-file.js'
import { describeFsError } from './walk.js'

/** Larger than any post (MySQL's MEDIUMTEXT `content` holds 16 MiB): likely not a post at all. */
export const MAX_FILE_BYTES = 16 * 1024 * 1024

const utf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * The file's text, or BadFileError (unreadable, too large, not UTF-8, NUL characters).
 * Synchronous on purpose: the command has nothing else to do meanwhile, and four thread-pool
 * round trips per small file (open, stat, read, close) made the import mostly idle waiting.
 */
export function readMarkdownFile (path: string): string {
  let bytes
  try {
    const fd = openSync(path, 'r')
    try {
      if (fstatSync(fd).size > MAX_FILE_BYTES) throw new BadFileError(`larger than ${MAX_FILE_BYTES / 1024 / 1024} MiB`)
      bytes = readFileSync(fd)
    } finally {
      closeSync(fd)
    }
  } catch (err) {
    if (err instanceof BadFileError) throw err
    throw new BadFileError(describeFsError(err))
  }
  let text
  try {
    text = utf8.decode(bytes)
  } catch {
    throw new BadFileError('not UTF-8 text')
  }
  // PostgreSQL text cannot hold NUL, and no Markdown has one.
  if (text.includes('\u0000')) throw new BadFileError('contains NUL characters (not a text file)')
  return text
}
