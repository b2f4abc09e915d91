// Runs a command on a supported Node.js line (scripts/supported-node.js); on a supported Node it
// does nothing at all.
//
// As a preload, first on the command line (`node --import ./scripts/on-supported-node.js
// dist/cli.js serve`, as `npm start` runs it): on an older Node, the same command line runs on the
// supported one, as a child that gets SIGINT and SIGTERM forwarded, and this process ends with
// its status.
// As a command (`node scripts/on-supported-node.js COMMAND ARGS...`, as `npm test` runs its
// tests): COMMAND runs with the supported Node first in PATH, so that every `node` it starts is
// that one. With `--bin` alone, it prints that folder (nothing on a supported Node), for shell
// scripts.
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { runChild, supportedNodeBin } from './supported-node.js'

const asCommand = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href
if (asCommand) {
  const [command, ...args] = process.argv.slice(2)
  if (command === undefined) {
    process.stderr.write('usage: node scripts/on-supported-node.js COMMAND [ARGS...] | --bin\n')
    process.exit(2)
  }
  const bin = supportedNodeBin()
  if (command === '--bin' && args.length === 0) process.stdout.write(`${bin ?? ''}\n`)
  else process.exit(await runChild(command, args, bin))
} else {
  const bin = supportedNodeBin()
  // The same command line, flags and preloads included, on the supported Node.
  if (bin !== undefined) process.exit(await runChild(join(bin, 'node'), [...process.execArgv, ...process.argv.slice(1)], bin))
}
