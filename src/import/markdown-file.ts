// Reading one Markdown file as text: bounded, valid UTF-8, storable.
import { open } from 'node:fs/promises'
import { BadFileError } from './bad-file.js'
import { describeFsError } from './walk.js'

/** Larger than any post (MySQL's MEDIUMTEXT `content` holds 16 MiB): likely not a post at all. */
export const MAX_FILE_BYTES = 16 * 1024 * 1024

const utf8 = new TextDecoder('utf-8', { fatal: true })

/** The file's text, or BadFileError (unreadable, too large, not UTF-8, NUL characters). */
export async function readMarkdownFile (path: string): Promise<string> {
  let bytes
  try {
    const file = await open(path)
    try {
      const { size } = await file.stat()
      if (size > MAX_FILE_BYTES) throw new BadFileError(`larger than ${MAX_FILE_BYTES / 1024 / 1024} MiB`)
      bytes = await file.readFile()
    } finally {
      await file.close()
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
