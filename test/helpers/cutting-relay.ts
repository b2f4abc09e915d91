// A TCP relay on loopback in front of a PostgreSQL server that can lose the connection at one
// precise point of the protocol: once armed, right after the server's CommandComplete that ends
// a query's rows, before the ReadyForQuery that follows it. The client sees its rows complete and
// its connection closed, as when the server is restarted or the backend terminated at that moment.
import { createServer, connect, type AddressInfo, type Socket } from 'node:net'

export interface CuttingRelay {
  port: number
  /** The next rows the server completes are followed by the end of that connection (once). */
  arm: () => void
  /** Connections cut so far. */
  cuts: () => number
  close: () => Promise<void>
}

/** PostgreSQL's backend message types (one byte, then an int32 length that counts itself). */
const DATA_ROW = 0x44 // 'D'
const COMMAND_COMPLETE = 0x43 // 'C'
const READY_FOR_QUERY = 0x5a // 'Z'

export async function startCuttingRelay (target: { host: string, port: number }): Promise<CuttingRelay> {
  let armed = false
  let cuts = 0
  const sockets = new Set<Socket>()
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host)
    let held = Buffer.alloc(0)
    let rowsSeen = false
    let cut = false
    client.on('data', (chunk) => upstream.write(chunk))
    // Whole messages only, so that the cut falls exactly after the CommandComplete.
    upstream.on('data', (chunk) => {
      held = Buffer.concat([held, chunk])
      let offset = 0
      while (held.length - offset >= 5) {
        const type = held[offset] as number
        const end = offset + 1 + held.readInt32BE(offset + 1)
        if (end > held.length) break
        if (type === DATA_ROW) rowsSeen = true
        if (type === READY_FOR_QUERY) rowsSeen = false
        if (armed && rowsSeen && type === COMMAND_COMPLETE) {
          armed = false
          cuts++
          cut = true
          // The client gets the CommandComplete, then the end of its connection.
          client.end(held.subarray(0, end))
          upstream.destroy()
          return
        }
        offset = end
      }
      client.write(held.subarray(0, offset))
      held = held.subarray(offset)
    })
    for (const [from, to] of [[client, upstream], [upstream, client]] as const) {
      sockets.add(from)
      from.on('end', () => to.end())
      from.on('error', () => to.destroy())
      from.on('close', () => {
        sockets.delete(from)
        // A cut ends the client's side gracefully, after what it was sent.
        if (!cut || from === client) to.destroy()
      })
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    arm: () => { armed = true },
    cuts: () => cuts,
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => server.close(resolve))
    }
  }
}
