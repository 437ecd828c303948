#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// Reads a multi-document YAML stream (helm template's output) on stdin and prints a JSON array
// of the non-empty documents.  Used by tests/e2e/test_deploy.py; needs `npm ci --prefix deploy/tools`.
'use strict';
const path = require('path');
const yaml = require(path.join(__dirname, 'node_modules', 'js-yaml'));
let text = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => { text += chunk; });
process.stdin.on('end', () => {
  try {
    const docs = yaml.loadAll(text).filter((d) => d !== null && d !== undefined);
    process.stdout.write(JSON.stringify(docs));
  } catch (e) {
    process.stderr.write(`yaml2json: ${e.message}\n`);
    process.exit(1);
  }
});
