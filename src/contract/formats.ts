// The representations of Markdown columns a read may add (`formats=html,text`) and the fields
// computed from a post rather than stored (`reading_time`, `word_count`, `excerpt`), shared by
// both tiers: the front checks `formats` before any upstream call, the post API renders.
import { ProblemError } from './problems.js'

export const FORMATS = ['html', 'text'] as const
export type Format = (typeof FORMATS)[number]

/** Fields a `fields` list may name that no column holds: computed from the first Markdown column. */
export const COMPUTED_FIELDS = ['excerpt', 'reading_time', 'word_count'] as const
export type ComputedField = (typeof COMPUTED_FIELDS)[number]

export const FORMATS_DETAIL = `The formats parameter must list ${FORMATS.join(' and/or ')}, separated by commas.`

/** `formats=html,text`: the names, unique and in canonical order (so equal queries give equal cache keys). */
export function parseFormats (text: string): readonly Format[] {
  const names = text.split(',')
  if (!names.every((name): name is Format => (FORMATS as readonly string[]).includes(name))) {
    throw new ProblemError('invalid-query', FORMATS_DETAIL)
  }
  return FORMATS.filter((format) => names.includes(format))
}

export function isComputedField (name: string): name is ComputedField {
  return (COMPUTED_FIELDS as readonly string[]).includes(name)
}
