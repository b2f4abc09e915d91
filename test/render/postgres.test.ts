import { postgresServer } from '../helpers/databases.js'
import { describeRenderedReads } from './rendered-suite.js'

describeRenderedReads('PostgreSQL', postgresServer)
