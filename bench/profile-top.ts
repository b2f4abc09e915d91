// Prints the functions with the most self time in a V8 .cpuprofile (as written by --cpu-prof),
// for the top frames a note on performance should quote:
//   node --import tsx bench/profile-top.ts bench/results/profiles/<file>.cpuprofile [count]
import { readFileSync } from 'node:fs'
import { relative } from 'node:path'
import { fileURLToPath } from 'node:url'

interface CpuProfile {
  nodes: Array<{ id: number, callFrame: { functionName: string, url: string, lineNumber: number } }>
  samples: number[]
  timeDeltas: number[]
}

const [file, count = '20'] = process.argv.slice(2)
if (file === undefined) throw new Error('usage: profile-top.ts <file.cpuprofile> [count]')
const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile

const frameOf = new Map(profile.nodes.map(({ id, callFrame: { functionName, url, lineNumber } }) => {
  const where = url.startsWith('file://') ? relative(process.cwd(), fileURLToPath(url)) : url
  return [id, `${functionName || '(anonymous)'} ${where}${where === '' ? '' : `:${lineNumber + 1}`}`.trim()]
}))
// Each sample's time is the delta that follows it; identical frames from several call paths add up.
const selfUs = new Map<string, number>()
profile.samples.forEach((id, i) => {
  const frame = frameOf.get(id) ?? '(unknown)'
  selfUs.set(frame, (selfUs.get(frame) ?? 0) + (profile.timeDeltas[i + 1] ?? 0))
})
const total = [...selfUs.values()].reduce((sum, us) => sum + us, 0)
const top = [...selfUs].sort((a, b) => b[1] - a[1]).slice(0, Number(count))
process.stdout.write(`${(total / 1000).toFixed(0)} ms sampled\n` +
  top.map(([frame, us]) => `${(100 * us / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms  ${frame}`).join('\n') + '\n')
