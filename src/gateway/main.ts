// Placeholder entry for the reference Off-Peak Gateway (the Gateway issue fills it in).
console.error('off-peak gateway: not implemented yet');
process.exitCode = 1;
