// Runs npm scripts at the same time and fails when any of them fails. The script after `--live`
// (the tests) writes to the terminal itself, as it would alone; each of the others (lint, the
// type check) has its output held and written whole, in one write, when it ends, so that two
// reports never interleave (the test reporter writes its lines whole too). `npm test` runs the
// checks beside the tests this way: run before them, the checks took about 14 s of wall clock
// for 23 s of CPU on two cores (ESLint runs on one), one core idle for about 5 s of it; beside
// them, they take the share of the cores the tests leave. The scripts that failed are named last.
//   node scripts/run-together.js lint typecheck --live test:only
import { spawn } from 'node:child_process'

const npm = process.env.npm_execpath === undefined ? ['npm'] : [process.execPath, process.env.npm_execpath]

/** Runs `npm run <script>`; resolves to its exit code (1 for a signal or a failure to start). */
function run (script, stdio, onOutput) {
  return new Promise((resolve) => {
    const child = spawn(npm[0], [...npm.slice(1), 'run', script, '--silent'], { stdio })
    child.stdout?.on('data', onOutput)
    child.stderr?.on('data', onOutput)
    child.on('error', (err) => { onOutput(Buffer.from(`${err.message}\n`)) })
    child.on('close', (code) => { resolve(code ?? 1) })
  })
}

/** Runs the `held` scripts and the `live` one (undefined: none) together; resolves to the exit code. */
async function runTogether (held, live) {
  const heldRuns = held.map(async (script) => {
    const output = []
    const code = await run(script, ['ignore', 'pipe', 'pipe'], (chunk) => output.push(chunk))
    process.stdout.write(Buffer.concat(output))
    return { script, code }
  })
  // Its output goes straight to the terminal; only a failure to start it passes through here.
  const liveRun = live === undefined ? [] : [run(live, 'inherit', (chunk) => process.stderr.write(chunk)).then((code) => ({ script: live, code }))]
  const failed = (await Promise.all([...heldRuns, ...liveRun])).filter(({ code }) => code !== 0)
  for (const { script, code } of failed) process.stderr.write(`npm run ${script} failed (exit code ${code})\n`)
  return failed.length === 0 ? 0 : 1
}

const args = process.argv.slice(2)
const at = args.indexOf('--live')
process.exitCode = await runTogether(at === -1 ? args : args.slice(0, at), at === -1 ? undefined : args[at + 1])
