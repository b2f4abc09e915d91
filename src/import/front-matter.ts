// Front matter: a YAML 1.2 mapping between `---` fences at the very top of a Markdown file, as
// Jekyll, Hugo and Ghost's Markdown exports write it. Parsed with `yaml` as data only: no tags
// run code, and `---js` fences (which gray-matter evaluates) are refused.
import { parse, YAMLParseError } from 'yaml'
import { BadFileError } from './bad-file.js'

export interface FrontMatter {
  /** The mapping's keys and values (empty when the file has no front matter). */
  data: Record<string, unknown>
  /** The Markdown after the closing fence. */
  body: string
}

const FENCE_LINE = /^---[ \t]*(?:\r?\n|$)/
const CLOSING_FENCE = /^---[ \t]*(?:\r?\n|$)/m
const OTHER_LANGUAGE = /^---[ \t]*([^\s-][^\r\n]*)/

export function parseFrontMatter (text: string): FrontMatter {
  const source = text.startsWith('\ufeff') ? text.slice(1) : text
  const opening = FENCE_LINE.exec(source)
  if (opening === null) {
    const language = OTHER_LANGUAGE.exec(source)?.[1]
    if (language !== undefined) throw new BadFileError(`front matter fenced as "---${language}" is not supported (only YAML, between "---" lines)`)
    return { data: {}, body: source }
  }
  const rest = source.slice(opening[0].length)
  const closing = CLOSING_FENCE.exec(rest)
  if (closing === null) throw new BadFileError('the front matter has no closing "---" line')
  const yaml = rest.slice(0, closing.index)
  return { data: parseMapping(yaml), body: rest.slice(closing.index + closing[0].length) }
}

function parseMapping (yaml: string): Record<string, unknown> {
  let data: unknown
  try {
    // Warnings (unknown tags) are not failures; `yaml` resolves such values as plain strings.
    data = parse(yaml, { logLevel: 'error' })
  } catch (err) {
    throw new BadFileError(`the front matter is not valid YAML: ${describeYamlError(err)}`)
  }
  if (data === null || data === undefined) return {}
  if (typeof data !== 'object' || Array.isArray(data)) throw new BadFileError('the front matter is not a mapping of keys to values')
  return data as Record<string, unknown>
}

/** The error's first sentence and its line in the file (the opening fence is line 1). */
function describeYamlError (err: unknown): string {
  if (!(err instanceof Error)) return String(err)
  const message = err.message.split(/ at line \d+|\n/)[0] ?? err.message
  const line = err instanceof YAMLParseError ? err.linePos?.[0]?.line : undefined
  return line === undefined ? message : `${message} (line ${line + 1})`
}
