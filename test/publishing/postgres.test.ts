import { postgresServer } from '../helpers/databases.js'
import { describePublishing } from './publishing-suite.js'

describePublishing('PostgreSQL', postgresServer)
