// Placeholder entry for the bundled reference agent (the Runtime issue fills it in).
console.error('off-peak reference agent: not implemented yet');
process.exitCode = 1;
