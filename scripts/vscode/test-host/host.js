// An extension that does nothing: see package.json.
/* global exports */
exports.activate = () => undefined;
