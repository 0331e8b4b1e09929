// The official conformance suite connects to a URL and sends no key. This puts the integration key
// on every request, as an assistant configured with one does, and checks the server's certificate
// by its pinned fingerprint; it stands for the server at its own address (a Host, and an Origin,
// naming the proxy itself become the server's). Nothing else about a request or its answer changes.
// Usage: node bearer-proxy.mjs <https MCP URL> <certificate fingerprint> <key file>
// Listens on loopback and prints {"url": ...} once ready.
import fs from "node:fs";
import http from "node:http";
import https from "node:https";

const [target, pin, keyFile] = process.argv.slice(2);
const upstream = new URL(target);
const key = fs.readFileSync(keyFile, "utf8").trim();
const wanted = pin.toLowerCase();
// The certificate is checked by its fingerprint below, not by a certificate authority; no TLS
// session is resumed, so every connection shows it.
const agent = new https.Agent({ keepAlive: true, rejectUnauthorized: false, maxCachedSessions: 0 });

const pinned = (socket) => {
  const fingerprint = socket.getPeerCertificate()?.fingerprint256 ?? "";
  return fingerprint.replaceAll(":", "").toLowerCase() === wanted;
};

const proxy = http.createServer((request, response) => {
  const headers = { ...request.headers, authorization: `Bearer ${key}` };
  // The proxy stands for the server at its own address: a Host naming the proxy, and an Origin of
  // a page of the proxy's, name the server instead. Any other passes as it came, for the server
  // to judge.
  const own = ownAddresses();
  if (own.includes(request.headers.host)) {
    headers.host = upstream.host;
  }
  if (own.some((address) => request.headers.origin === `http://${address}`)) {
    headers.origin = upstream.origin;
  }
  const forwarded = https.request(
    { host: upstream.hostname, port: upstream.port, path: request.url, method: request.method, headers, agent },
    (answer) => {
      response.writeHead(answer.statusCode, answer.headers);
      answer.pipe(response);
    },
  );
  forwarded.on("socket", (socket) => {
    // A kept-alive connection was checked when it was made.
    if (socket.pinChecked) {
      return;
    }
    socket.pinChecked = true;
    socket.once("secureConnect", () => {
      if (!pinned(socket)) {
        socket.destroy(new Error("the server's certificate does not match the pin"));
      }
    });
  });
  forwarded.on("error", (error) => {
    if (!response.headersSent) {
      response.writeHead(502, { "content-type": "text/plain" });
    }
    response.end(String(error.message));
  });
  request.on("aborted", () => forwarded.destroy());
  request.pipe(forwarded);
});

const ownAddresses = () => {
  const port = proxy.address().port;
  return [`127.0.0.1:${port}`, `localhost:${port}`];
};

proxy.listen(0, "127.0.0.1", () => {
  console.log(JSON.stringify({ url: `http://127.0.0.1:${proxy.address().port}${upstream.pathname}` }));
});
