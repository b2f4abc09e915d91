import { mysqlServer } from '../helpers/databases.js'
import { describeImport } from './import-suite.js'
import { describeImportTables } from './import-tables-suite.js'

describeImport('MySQL/MariaDB', mysqlServer)
describeImportTables('MySQL/MariaDB', mysqlServer, {
  operatorTable: `CREATE TABLE posts (id INT AUTO_INCREMENT PRIMARY KEY, slug VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL UNIQUE,
    title VARCHAR(500) NOT NULL CHECK (CHAR_LENGTH(title) <= 20), content TEXT, category VARCHAR(50), featured BOOLEAN, extra JSON,
    published_at DATETIME(3)) CHARACTER SET utf8mb4`,
  teamTable: `CREATE TABLE posts (id INT AUTO_INCREMENT PRIMARY KEY, slug VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL UNIQUE,
    title VARCHAR(20) NOT NULL, body_html MEDIUMTEXT NOT NULL, summary VARCHAR(200) NOT NULL DEFAULT '', tags JSON, status ENUM('draft', 'published'), lang VARCHAR(8) NOT NULL,
    minutes INT, published_at DATETIME) CHARACTER SET utf8mb4`,
  teamRefusals: [
    /^team\/long-title\.md: column `title` \(varchar\(20\)\) cannot hold "A title far longer than twenty characters": 41 characters, more than its 20$/,
    /^team\/bad-minutes\.md: column `minutes` \(int(\(11\))?\) cannot hold "ten": expected a whole number$/
  ]
})
