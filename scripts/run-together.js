// Runs npm scripts at the same time, each one's output held and written whole when it ends (so
// that two reports never interleave), and fails when any of them fails: `npm test` checks lint
// and types this way, each of which keeps one core busy for a few seconds.
//   node scripts/run-together.js lint typecheck
import { spawn } from 'node:child_process'

const npm = process.env.npm_execpath === undefined ? ['npm'] : [process.execPath, process.env.npm_execpath]

function run (script) {
  return new Promise((resolve) => {
    const child = spawn(npm[0], [...npm.slice(1), 'run', script, '--silent'], { stdio: ['ignore', 'pipe', 'pipe'] })
    const output = []
    child.stdout.on('data', (chunk) => output.push(chunk))
    child.stderr.on('data', (chunk) => output.push(chunk))
    child.on('error', (err) => { output.push(Buffer.from(`${err.message}\n`)) })
    child.on('close', (code) => {
      process.stdout.write(Buffer.concat(output))
      if (code !== 0) process.stderr.write(`npm run ${script} failed (exit code ${code})\n`)
      resolve(code === 0)
    })
  })
}

const results = await Promise.all(process.argv.slice(2).map(run))
process.exitCode = results.every(Boolean) ? 0 : 1
