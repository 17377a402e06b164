// Starts oauth2-mock-server (the peer bench/run compares the token
// endpoint with) on a free loopback port, with an RS256 key of 2048 bits
// (jose's default), and prints its address as host:port on stdout.
// Usage: node oauth2-mock-server.mjs PATH_TO_PACKAGE_ENTRY (dist/index.mjs)
import { pathToFileURL } from 'node:url';

const { OAuth2Server } = await import(pathToFileURL(process.argv[2]).href);
const server = new OAuth2Server();
await server.issuer.keys.generate('RS256');
await server.start(0, '127.0.0.1');
console.log(`127.0.0.1:${server.address().port}`);
