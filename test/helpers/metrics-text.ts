// Reads a Prometheus text exposition (format 0.0.4) as a scraper would: every sample line, by
// metric name and labels. Enough of the format for ours: label values without quotes, commas or
// backslashes (routes, methods, statuses, kinds), which it checks rather than assumes.
import assert from 'node:assert/strict'

export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})? (\S+)$/
const LABEL = /^([a-zA-Z_][a-zA-Z0-9_]*)="([^"\\,]*)"$/

export function parseMetrics (text: string): Sample[] {
  const samples: Sample[] = []
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const match = SAMPLE_LINE.exec(line)
    assert.ok(match !== null, `not a sample line: ${line}`)
    const [, name = '', labelText = '', value = ''] = match
    const labels: Record<string, string> = {}
    for (const pair of labelText === '' ? [] : labelText.split(',')) {
      const label = LABEL.exec(pair)
      assert.ok(label !== null, `not a label: ${pair} in ${line}`)
      labels[label[1] ?? ''] = label[2] ?? ''
    }
    samples.push({ name, labels, value: Number(value) })
  }
  return samples
}

/** The samples of `name` whose labels include `labels`. */
export function samplesOf (samples: readonly Sample[], name: string, labels: Record<string, string> = {}): Sample[] {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value))
}

/** The one sample of `name` with exactly these labels (besides none), or 0 when absent (a series not yet counted). */
export function valueOf (samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter((s) => s.name === name && Object.keys(s.labels).length === Object.keys(labels).length &&
    Object.entries(labels).every(([key, value]) => s.labels[key] === value))
  assert.ok(found.length <= 1, `several samples of ${name} ${JSON.stringify(labels)}`)
  return found[0]?.value ?? 0
}
