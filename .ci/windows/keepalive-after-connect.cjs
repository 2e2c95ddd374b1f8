// Wine 8 gap, not a project fix: under Wine 8.0, libuv's TCP keep-alive option set on a socket
// before it connects makes the connect fail (UNKNOWN), and undici (fetch) sets it first. Loaded
// with --require in the Windows lane only (.ci/windows-lane.sh): keep-alive is applied once the
// socket is connected instead. Real Windows needs nothing of this.
'use strict';
const net = require('node:net');

const setKeepAlive = net.Socket.prototype.setKeepAlive;
net.Socket.prototype.setKeepAlive = function keepAliveOnceConnected(enable, initialDelay) {
  if (this.connecting || this.pending || !this._handle) {
    this.once('connect', () => setKeepAlive.call(this, enable, initialDelay));
    return this;
  }
  return setKeepAlive.call(this, enable, initialDelay);
};
