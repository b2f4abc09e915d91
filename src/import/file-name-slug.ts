// A slug for a file whose front matter gives none, derived from its name:
// `Third Post!.md` → `third-post`, `Café Crème.md` → `cafe-creme`.
import { basename, extname } from 'node:path'

/**
 * Lower-cased, accents removed (NFKD, then the combining marks dropped), each run of
 * characters other than ASCII letters and digits one hyphen, hyphens trimmed. May return ''
 * (a name of punctuation only, or of letters with no ASCII form such as `日本.md`): the caller
 * checks the result against the slug rule like any other slug.
 */
export function slugFromFileName (path: string): string {
  const file = basename(path)
  // `.md` itself is an extension, not a dot file's name.
  const name = /\.md$/i.test(file) ? file.slice(0, -3) : file.slice(0, file.length - extname(file).length)
  return name.toLowerCase()
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
}
