// Writes test/parts/weights.json, the seconds each test file took in a run of `npm test`, read
// from that run's report (the spec reporter's line that ends each file's suite), so that the
// parts (test/parts/part.ts) share the files evenly. Run it on a run without outside services,
// as a newcomer's, whose time is the one bounded:
//   npm test | tee /tmp/report.txt; node scripts/part-weights.js < /tmp/report.txt
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const SUITE_END = /^[✔✖] test\/(\S+\.test\.ts) \(([\d.]+)ms\)$/
const weights = {}
for (const line of readFileSync(0, 'utf8').split('\n')) {
  const match = SUITE_END.exec(line)
  if (match !== null) weights[match[1]] = Math.round(Number(match[2]) / 100) / 10
}
if (Object.keys(weights).length === 0) {
  process.stderr.write('no file\'s suite in that report: give it the spec report of npm test\n')
  process.exit(1)
}
const sorted = Object.fromEntries(Object.entries(weights).sort(([a], [b]) => a < b ? -1 : 1))
writeFileSync(fileURLToPath(new URL('../test/parts/weights.json', import.meta.url)), `${JSON.stringify(sorted, null, 2)}\n`)
process.stdout.write(`test/parts/weights.json: ${Object.keys(sorted).length} files\n`)
