// Markdown to HTML and plain text, parsed once for both. CommonMark with GitHub's tables,
// strikethrough and autolinks (bare `https://…`, `www.…` and e-mail addresses), by markdown-it.
// What is rendered:
// - Raw HTML in the source is escaped and shown as text (`html: false`), so the output holds only
//   the tags markdown-it writes and needs no sanitiser; HTML comments are dropped.
// - Links and images keep only http, https, mailto and relative targets; any other is left as
//   the literal Markdown text (see link-policy.ts). `data:` images are refused too: they bloat
//   every list and feed answer, and most content security policies block them anyway.
// - Headings get GitHub-style ids.
// - Nesting is bounded by markdown-it's `maxNesting` (100 in its default preset): blocks nested
//   deeper (block quotes, lists) are left out, and inline constructs nested deeper (a link inside
//   a link…) stay as text. Emphasis is paired in linear time, and nested emphasis renders nested.
// - Long lines are kept as they are (no wrapping, no limit): the output escapes them like any text.
//
// markdown-it is loaded when the first document is rendered, not when the post API starts: most
// answers need no rendering, and its modules would lengthen every start. It is required (its
// CommonJS build), so that rendering stays synchronous.
import { createRequire } from 'node:module'
import type { default as createMarkdownIt, MarkdownIt } from 'markdown-it'
import { headingIds } from './heading-ids.js'
import { dropHtmlComments } from './html-comments.js'
import { isAllowedLink } from './link-policy.js'
import { plainText } from './plain-text.js'
import { countWords } from './words.js'

export interface RenderedMarkdown {
  /** The document as HTML: only tags markdown-it writes, every text escaped. */
  html: string
  /** The document as plain text, one line per block (see plain-text.ts). */
  text: string
  /** The number of words of `text` (see words.ts). */
  wordCount: number
}

export type MarkdownRenderer = (source: string) => RenderedMarkdown

export function createMarkdownRenderer (): MarkdownRenderer {
  let md: MarkdownIt | undefined
  return (source) => {
    md ??= createParser()
    const env = {}
    const tokens = md.parse(source, env)
    const text = plainText(tokens)
    return { html: md.renderer.render(tokens, md.options, env), text, wordCount: countWords(text) }
  }
}

function createParser (): MarkdownIt {
  const MarkdownItClass = createRequire(import.meta.url)('markdown-it') as typeof createMarkdownIt
  const md = new MarkdownItClass('default', { html: false, linkify: true, typographer: false })
  md.validateLink = isAllowedLink
  linkWwwDomains(md.linkify)
  md.use(dropHtmlComments)
  md.use(headingIds)
  return md
}

/**
 * GitHub links `www.example.com` (as `http://www.example.com`) but not other bare domains, which
 * in a technical blog are mostly file names (`README.md`, `setup.py`); linkify-it links neither
 * by default, so `www.` is taught here, with its own host-and-path validator.
 */
function linkWwwDomains (linkify: MarkdownIt['linkify']): void {
  linkify.add('www.', {
    validate: (text, pos, self) => {
      const validator = self.re.get_relative_proto_validator()
      validator.lastIndex = pos
      const match = validator.exec(text)
      return match === null ? 0 : match[0].length
    },
    normalize: (match) => {
      match.url = `http://${match.url}`
    }
  })
}
