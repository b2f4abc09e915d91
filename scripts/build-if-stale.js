// Builds dist/ only when it is older than src/, with the compiler `npm run build` uses
// (TypeScript 7's native tsc), in the process that then runs the service:
// `node --import ./scripts/build-if-stale.js dist/cli.js serve` (npm start) runs this first, so
// the process npm starts is the service itself and a current build costs a few file stats. Also
// runs alone (`node scripts/build-if-stale.js`, as the fleet demo does). A signal during the
// build stops the compiler too; a build that fails ends the process with the compiler's code.
import cluster from 'node:cluster'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createRequire } from 'node:module'
import { dirname, join, relative } from 'node:path'
import { PROJECTS, ROOT, staleModule } from './dist-freshness.js'

// A cluster worker runs the build its primary checked (and would race the other workers).
for (const project of cluster.isWorker ? [] : PROJECTS) {
  const stale = staleModule(project)
  if (stale === undefined) continue
  process.stderr.write(`${stale} is newer than ${relative(ROOT, project.dist)}/: building (tsc -p ${relative(ROOT, project.tsconfig)})\n`)
  const tsc = join(dirname(createRequire(import.meta.url).resolve('@typescript/native/package.json')), 'bin', 'tsc')
  // The compiler's report goes to stderr: stdout is the service's log.
  const compiler = spawn(process.execPath, [tsc, '-p', project.tsconfig], { cwd: ROOT, stdio: ['ignore', 2, 2] })
  const stop = (signal) => {
    compiler.kill(signal)
    process.exitCode = 128 + (signal === 'SIGINT' ? 2 : 15)
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
  const [code, signal] = await once(compiler, 'exit')
  process.off('SIGINT', stop)
  process.off('SIGTERM', stop)
  if (signal !== null) process.exit(process.exitCode ?? 1)
  if (code !== 0) {
    process.stderr.write(`the build failed (exit code ${code}): ${relative(ROOT, project.dist)}/ is not current\n`)
    process.exit(code)
  }
}
