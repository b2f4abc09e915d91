// HTML comments are dropped from rendered Markdown. Raw HTML is otherwise escaped and shown as
// text, but a comment is by definition the author's note and never meant for readers: imported
// posts carry `<!-- more -->` excerpt markers and TODOs that would otherwise appear on the page.
// A comment is what CommonMark calls one: `<!-->`, `<!--->`, or `<!--` up to the first `-->`.
// On its own lines it ends the paragraph before it (as CommonMark's HTML block does) and leaves
// nothing; inside a paragraph it leaves nothing in that paragraph. An unclosed `<!--` is text.
import type { MarkdownIt, StateBlock, StateInline } from 'markdown-it'

const OPEN = '<!--'
const CLOSE = '-->'

/**
 * Finds where comments opened in one source end. A `<!--` without a `-->` after it means no
 * `-->` follows any later position either, so that answer is remembered: a document of
 * many unclosed `<!--` costs one scan, not one per opener.
 */
class CommentScanner {
  readonly #src: string
  #unclosedFrom = Number.POSITIVE_INFINITY

  constructor (src: string) {
    this.#src = src
  }

  /** The offset just past the comment opened at `start`, or -1 when none is (or it never closes). */
  endOf (start: number): number {
    const src = this.#src
    if (!src.startsWith(OPEN, start)) return -1
    if (src.startsWith('>', start + 4)) return start + 5
    if (src.startsWith('->', start + 4)) return start + 6
    if (start >= this.#unclosedFrom) return -1
    const close = src.indexOf(CLOSE, start + 4)
    if (close === -1) {
      this.#unclosedFrom = start
      return -1
    }
    return close + CLOSE.length
  }
}

// One scanner per parse state (the block state is shared by a whole document, an inline state by
// one paragraph), so nothing outlives a render.
const scanners = new WeakMap<object, CommentScanner>()

function scannerFor (state: StateBlock | StateInline): CommentScanner {
  let scanner = scanners.get(state)
  if (scanner === undefined) {
    scanner = new CommentScanner(state.src)
    scanners.set(state, scanner)
  }
  return scanner
}

function commentBlock (state: StateBlock, startLine: number, endLine: number, silent: boolean): boolean {
  // Indented four columns or more, it is code.
  if (state.sCount[startLine]! - state.blkIndent >= 4) return false
  const start = state.bMarks[startLine]! + state.tShift[startLine]!
  const end = scannerFor(state).endOf(start)
  if (end === -1) return false
  let line = startLine
  while (line < endLine && state.eMarks[line]! < end) {
    line++
    // A line less indented than the container's content ends the container (a list item).
    if (!state.isEmpty(line) && state.sCount[line]! < state.blkIndent) return false
  }
  // The comment must close inside this container, and nothing but spaces may follow it on its
  // last line; otherwise the paragraph rule takes the lines and the inline rule drops the comment.
  if (line >= endLine || state.src.slice(end, state.eMarks[line]).trim() !== '') return false
  if (!silent) state.line = line + 1
  return true
}

function commentInline (state: StateInline): boolean {
  const end = scannerFor(state).endOf(state.pos)
  if (end === -1 || end > state.posMax) return false
  // Nothing is pushed, silent mode or not: the comment leaves no trace in the paragraph (and a
  // silent match must move `pos` too, since markdown-it skips what it matched).
  state.pos = end
  return true
}

export function dropHtmlComments (md: MarkdownIt): void {
  md.block.ruler.before('html_block', 'html_comment', commentBlock, { alt: ['paragraph', 'reference', 'blockquote'] })
  md.inline.ruler.before('html_inline', 'html_comment', commentInline)
}
