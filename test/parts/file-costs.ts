// What each slow test file costs, in seconds of `npm test` on the 2-core machine with three
// parts at once (the durations the spec reporter prints beside each file's path): as a newcomer
// runs it (SQLite, no outside service; a suite whose server is missing is skipped at once), and
// with every server, as CI runs it. The parts share the files out by these, so that they end
// together; a file not named here counts as TYPICAL_COST. Measure again when a file is added or
// grows slow, and name the files above 2.5 s in either run. These are the means of two runs of
// each kind (a machine of the AMD kind, 2026-11-30). With the figures before them, the last
// part of a newcomer's run ended 14 to 15 s after the other two; with these, 0.4 to 0.8 s.
export const FILE_COSTS: Readonly<Record<string, readonly [newcomer: number, everyServer: number]>> = {
  'test/browser.test.ts': [0.1, 18.3],
  'test/client/package.test.ts': [4.9, 9.7],
  'test/edge/request-fuzz.test.ts': [6.6, 10.6],
  'test/feeds/feed-routes.test.ts': [1.1, 2.7],
  'test/feeds/sitemap.test.ts': [2.3, 4.6],
  'test/fleet/shared-versions.test.ts': [1.7, 5.6],
  'test/fleet/upstreams.test.ts': [17.1, 20.4],
  'test/fleet/workers.test.ts': [11.0, 15.2],
  'test/front/cache/page-index.test.ts': [6.3, 5.3],
  'test/front/client-misbehaviour.test.ts': [3.5, 3.6],
  'test/front/fast-lane.test.ts': [6.4, 6.9],
  'test/front/fault-under-load.test.ts': [11.5, 11.2],
  'test/front/path-fuzz.test.ts': [10.8, 10.8],
  'test/front/query-fuzz.test.ts': [3.7, 5.1],
  'test/front/resilience.test.ts': [3.0, 2.9],
  'test/import/postgres.test.ts': [0.1, 2.9],
  'test/ops/admin.test.ts': [3.6, 3.9],
  'test/ops/cluster-metrics.test.ts': [2.3, 2.6],
  'test/posts-api/list-queries.test.ts': [2.5, 4.1],
  'test/posts-api/whole-list-sync.test.ts': [1.0, 3.2],
  'test/process/cli.test.ts': [3.1, 5.4],
  'test/process/demo-fleet.test.ts': [0.1, 12.0],
  'test/process/npm-scripts.test.ts': [2.6, 2.3],
  'test/process/shutdown.test.ts': [3.4, 3.8],
  'test/process/start-modules.test.ts': [1.5, 3.0],
  'test/publishing/mysql.test.ts': [0.1, 10.4],
  'test/publishing/postgres.test.ts': [0.1, 12.3],
  'test/publishing/sqlite.test.ts': [4.3, 2.9],
  'test/render/large-documents.test.ts': [10.3, 10.4],
  'test/search/memory-search-index.test.ts': [3.3, 1.6],
  'test/search/search-fuzz.test.ts': [2.2, 4.3],
  'test/search/search-http.test.ts': [4.0, 7.1],
  'test/store/cursor-fuzz.test.ts': [4.4, 10.8],
  'test/store/list-query-model.test.ts': [5.8, 22.6],
  'test/store/mysql.test.ts': [0.1, 9.4],
  'test/store/neighbours-model.test.ts': [1.6, 12.9],
  'test/store/pgbouncer.test.ts': [0.1, 35.8],
  'test/store/postgres-private-server.test.ts': [0.1, 2.7],
  'test/store/postgres.test.ts': [0.1, 24.7],
  'test/store/replica.test.ts': [0.1, 3.8],
  'test/store/sqlite.test.ts': [8.1, 8.6],
  'test/store/walks-model.test.ts': [3.3, 10.0],
  'test/sync/change-stream.test.ts': [2.0, 7.9],
  'test/sync/changes-model.test.ts': [3.9, 4.2],
  'test/sync/event-stream.test.ts': [2.8, 2.9],
  'test/sync/front-subscribers.test.ts': [2.7, 2.7]
}

/** What a file not in FILE_COSTS counts as: about the mean of the others (0.39 s in a newcomer's run). */
export const TYPICAL_COST = 0.4

/** Whether this run has its servers (CI, or a database named): which of the two costs applies. */
export const COST_COLUMN = process.env.CI === 'true' || process.env.TEST_POSTGRES_URL !== undefined || process.env.TEST_MYSQL_URL !== undefined ? 1 : 0
