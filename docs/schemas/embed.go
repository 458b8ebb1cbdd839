package schemas

import "embed"

// FS holds the schema files of this folder (*.schema.json), for code
// that validates against them at run time (./run.sh contract-check).
//
//go:embed *.schema.json
var FS embed.FS

// RecordsLine is the records line schema's file name in FS.
const RecordsLine = "records-line.schema.json"
