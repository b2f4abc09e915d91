// A TCP relay on loopback in front of a database server that counts round trips (each time the
// client speaks after the server has, or first, it waits once more for the network; TCP may
// split a burst into several chunks, so only a change of direction counts) and the bytes sent.
import { createServer, connect, type AddressInfo, type Socket } from 'node:net'

export interface RoundTripCounter {
  port: number
  /** Round trips since the relay started (or since the last reset). */
  roundTrips: () => number
  /** Bytes the client sent, over the same span. */
  clientBytes: () => number
  reset: () => void
  close: () => Promise<void>
}

export async function startRoundTripCounter (target: { host: string, port: number }): Promise<RoundTripCounter> {
  let roundTrips = 0
  let clientBytes = 0
  const sockets = new Set<Socket>()
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host)
    let clientSpoke = false
    client.on('data', (chunk) => {
      if (!clientSpoke) roundTrips++
      clientSpoke = true
      clientBytes += chunk.length
      upstream.write(chunk)
    })
    upstream.on('data', (chunk) => {
      clientSpoke = false
      client.write(chunk)
    })
    for (const [from, to] of [[client, upstream], [upstream, client]] as const) {
      sockets.add(from)
      from.on('end', () => to.end())
      from.on('error', () => to.destroy())
      from.on('close', () => { sockets.delete(from); to.destroy() })
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    roundTrips: () => roundTrips,
    clientBytes: () => clientBytes,
    reset: () => { roundTrips = 0; clientBytes = 0 },
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => server.close(resolve))
    }
  }
}
