// Parses `nvidia-smi --query-gpu=... --format=csv` from stdin the way CSV consumers do:
// header names (unit suffix dropped) as keys, ", " separated cells, and a bracketed
// value ("[N/A]", "[Not Supported]", "[Unknown Error]") as null for that cell only.
// Prints a JSON array of objects.  Independent of our C code on purpose.
'use strict';
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => { input += d; });
process.stdin.on('end', () => {
  const lines = input.split('\n').filter((l) => l.length > 0);
  const header = lines[0].split(', ').map((h) => h.replace(/ \[[^\]]*\]$/, ''));
  const rows = lines.slice(1).map((line) => {
    const cells = line.split(', ');
    if (cells.length !== header.length) {
      throw new Error(`row has ${cells.length} cells, header ${header.length}: ${line}`);
    }
    const row = {};
    header.forEach((h, i) => {
      const c = cells[i].trim();
      row[h] = /^\[.*\]$/.test(c) ? null : c;
    });
    return row;
  });
  process.stdout.write(JSON.stringify(rows) + '\n');
});
