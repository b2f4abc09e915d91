// The executable's process (cli.ts starts it): its arguments, environment and streams in, its
// exit code out; main.ts does the work. A cluster worker that cannot start hands its line to the
// primary, which prints one for all workers.
import { reportStartFailure, workerId } from '../process/cluster.js'
import { runCli } from './main.js'

process.exitCode = await runCli(process.argv.slice(2), {
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  ...(workerId() === undefined ? {} : { reportFailure: reportStartFailure })
})
