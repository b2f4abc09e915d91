import { mysqlServer } from '../helpers/databases.js'
import { describeRenderedReads } from './rendered-suite.js'

describeRenderedReads('MySQL/MariaDB', mysqlServer)
