import { sqliteServer } from '../helpers/databases.js'
import { describeRenderedReads } from './rendered-suite.js'

describeRenderedReads('SQLite', sqliteServer)
