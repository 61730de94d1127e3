// tsmq console front end: plain ES module, no dependencies, no build step.
// Pages are hash routes (#/cluster, #/topics, ...) rendered from the JSON API (/api/*).

const main = document.getElementById('main');
const stateBadge = document.getElementById('state');

const esc = (v) => String(v ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
const fmtNum = (n) => (typeof n === 'number' ? n.toLocaleString('en-US', { maximumFractionDigits: 2 }) : esc(n));
const fmtBytes = (b) => {
  if (!(b >= 0)) return '';
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (b >= 1024 && i < u.length - 1) { b /= 1024; i++; }
  return `${b.toFixed(i === 0 ? 0 : 1)} ${u[i]}`;
};
const fmtTps = (text) => String(text ?? '').split(' ').map((x) => Number(x).toFixed(2)).join(' · ');
const fmtTime = (ms) => (ms > 0 ? new Date(ms).toISOString().replace('T', ' ').replace('Z', '') : '');

async function api(path, opts = {}) {
  const res = await fetch(path, { headers: { 'content-type': 'application/json' }, ...opts });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(body.error || (body.state === 'recovering' ? 'the broker is recovering its store' : `HTTP ${res.status}`));
  return body;
}

/** Line chart as inline SVG: series = [{name, values, color}], aligned to the right. */
function chart(title, series, unit = '/s') {
  const w = 420, h = 120, pad = 28;
  const n = Math.max(2, ...series.map((s) => s.values.length));
  const max = Math.max(1, ...series.flatMap((s) => s.values));
  const x = (i, len) => pad + ((n - len + i) * (w - pad - 6)) / (n - 1);
  const y = (v) => h - 18 - (v / max) * (h - 30);
  const lines = series.map((s) => {
    const pts = s.values.map((v, i) => `${x(i, s.values.length).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
    return `<polyline fill="none" stroke="${s.color}" stroke-width="2" points="${pts}"/>`;
  }).join('');
  const legend = series.map((s) => `<tspan fill="${s.color}">■ ${esc(s.name)} ${fmtNum(s.values.at(-1) ?? 0)}${unit} </tspan>`).join('');
  return `<div class="chart"><div class="title">${esc(title)}</div><svg width="${w}" height="${h}" role="img" aria-label="${esc(title)}">
    <line x1="${pad}" y1="${h - 18}" x2="${w}" y2="${h - 18}" stroke="#c5cbd6"/>
    <text x="2" y="14" font-size="10" fill="#7a8597">${fmtNum(max)}</text><text x="2" y="${h - 20}" font-size="10" fill="#7a8597">0</text>
    ${lines}<text x="${pad}" y="${h - 3}" font-size="11">${legend}</text></svg></div>`;
}
const COLORS = ['#3b7bd9', '#e67e22', '#27ae60', '#8e44ad', '#c0392b', '#16a085'];

function table(headers, rows, numeric = []) {
  const th = headers.map((hd, i) => `<th class="${numeric.includes(i) ? 'num' : ''}">${esc(hd)}</th>`).join('');
  const trs = rows.map((r) => `<tr>${r.map((c, i) => `<td class="${numeric.includes(i) ? 'num' : ''}">${c}</td>`).join('')}</tr>`).join('');
  return `<table><thead><tr>${th}</tr></thead><tbody>${trs || `<tr><td colspan="${headers.length}" class="muted">none</td></tr>`}</tbody></table>`;
}
const card = (k, v, id) => `<div class="card"${id ? ` data-testid="${id}"` : ''}><div class="k">${esc(k)}</div><div class="v">${v}</div></div>`;

const pages = {
  async cluster() {
    const [c, rates] = await Promise.all([api('/api/cluster'), api('/api/rates')]);
    const b = c.brokers[0];
    return `<h1>Cluster ${esc(c.clusterName)}</h1>
      <div class="cards">${card('Brokers', c.brokers.length)}${card('Nameservers', c.nameservers.length)}${card('Disk used (CommitLog partition)', b.commitLogDiskRatio >= 0 ? `${(b.commitLogDiskRatio * 100).toFixed(1)} %` : '?')}${card('CommitLog max offset', fmtNum(b.commitLogMaxOffset))}</div>
      <div class="charts">${chart('Messages per second (last minutes)', [{ name: 'put', values: rates.putTps, color: COLORS[0] }, { name: 'get', values: rates.getTps, color: COLORS[1] }])}</div>
      <h2>Brokers</h2>${table(['Name', 'Id', 'Address', 'Role', 'Version', 'Put TPS (10s 60s 600s)', 'Get TPS', 'Uptime', 'Disk', 'Store'],
        c.brokers.map((x) => [esc(x.brokerName), x.brokerId, esc(x.address), esc(x.role), `${esc(x.version)} <span class="muted">tsmq ${esc(x.tsmqVersion)}</span>`, fmtTps(x.putTps), fmtTps(x.getTransferredTps), esc(x.runtime), esc(x.commitLogDirCapacity), esc(x.storePathRootDir)]))}
      <h2>Nameservers</h2>${table(['Address'], c.nameservers.map((n) => [esc(n)]))}`;
  },

  async topics() {
    const [topics, rates] = await Promise.all([api('/api/topics'), api('/api/rates')]);
    const user = topics.filter((t) => !t.system);
    const top = user.slice().sort((a, b) => b.putTps - a.putTps).slice(0, 4);
    const rows = topics.map((t) => [
      `<b>${esc(t.topic)}</b>${t.system ? ' <span class="badge">system</span>' : ''}${t.order ? ' <span class="badge">order</span>' : ''}`,
      t.readQueueNums, t.writeQueueNums, esc(t.permText),
      `<span data-testid="max-${esc(t.topic)}">${fmtNum(t.totalMessages)}</span>`,
      t.queues.map((q) => `q${q.queueId}: ${q.minOffset}–${q.maxOffset}`).join('<br>'),
      fmtNum(t.putTps),
      t.system ? '' : `<button class="plain" data-act="perm" data-topic="${esc(t.topic)}" data-perm="${t.perm === 6 ? 4 : 6}">${t.perm === 6 ? 'make read-only' : 'make read-write'}</button> <button class="danger" data-act="delete" data-topic="${esc(t.topic)}">delete</button>`,
    ]);
    return `<h1>Topics</h1>
      <div class="charts">${top.map((t, i) => chart(`${t.topic}: messages put per second`, [{ name: 'put', values: rates.topicPutTps[t.topic] || [], color: COLORS[i % COLORS.length] }])).join('')}</div>
      <form class="inline" id="topic-form"><label>Topic<input name="topic" required></label><label>Read queues<input name="readQueueNums" type="number" value="4" min="1"></label><label>Write queues<input name="writeQueueNums" type="number" value="4" min="1"></label>
        <label>Permission<select name="perm"><option value="6">read-write</option><option value="4">read</option><option value="2">write</option></select></label><button>Create / update</button></form>
      ${table(['Topic', 'Read queues', 'Write queues', 'Perm', 'Messages (max offsets)', 'Queue min–max offsets', 'Put TPS (1 min)', ''], rows, [1, 2, 4, 6])}`;
  },

  async groups() {
    const [groups, rates] = await Promise.all([api('/api/groups'), api('/api/rates')]);
    const lagSeries = Object.entries(rates.lag).slice(0, 6).map(([k, v], i) => ({ name: k, values: v, color: COLORS[i % COLORS.length] }));
    const sections = groups.map((g) => `<h2>${esc(g.group)} <span class="badge ${g.online ? 'on' : 'off'}">${g.online ? `online: ${g.clients.length} client${g.clients.length === 1 ? '' : 's'}` : 'offline'}</span></h2>
      <div class="cards">${card('Lag (messages)', `<span data-testid="lag-${esc(g.group)}">${fmtNum(g.totalLag)}</span>`)}${card('Retry topic messages', fmtNum(g.retryMessages))}${card('DLQ messages', `<span data-testid="dlq-${esc(g.group)}">${fmtNum(g.dlqMessages)}</span>`)}${card('Model', esc(g.messageModel ?? '—'))}</div>
      ${g.clients.length ? table(['Client id', 'Address', 'Language', 'Version'], g.clients.map((c) => [esc(c.clientId), esc(c.address), esc(c.language), c.version])) : ''}
      ${table(['Topic', 'Lag', 'In flight', 'Consume TPS (1 min)', 'Oldest unconsumed (ms)'], g.topics.map((t) => [esc(t.topic), fmtNum(t.lag), fmtNum(t.inflight), fmtNum(t.consumeTps), fmtNum(t.lagLatencyMs)]), [1, 2, 3, 4])}
      ${table(['Topic', 'Queue', 'Broker offset', 'Consumer offset', 'Lag'], g.queues.map((q) => [esc(q.topic), q.queueId, fmtNum(q.brokerOffset), fmtNum(q.consumerOffset), fmtNum(q.lag)]), [1, 2, 3, 4])}
      <form class="inline" data-reset="${esc(g.group)}"><label>Topic<select name="topic">${g.topics.map((t) => `<option>${esc(t.topic)}</option>`).join('')}</select></label><label>Reset offsets to time<input name="time" type="datetime-local" step="1"></label><button ${g.topics.length ? '' : 'disabled'}>Reset offset</button></form>`);
    return `<h1>Consumer groups</h1><div class="charts">${chart('Lag (messages) over the last minutes', lagSeries, '')}</div>${sections.join('') || '<p class="muted">No consumer groups yet.</p>'}`;
  },

  async messages() {
    return `<h1>Messages</h1>
      <form class="inline" id="msg-form">
        <label>Search by<select name="by"><option value="key">key / unique key</option><option value="msgId">message id</option><option value="queue">queue + offset</option><option value="time">time range</option></select></label>
        <label>Topic<input name="topic"></label><label>Key / message id<input name="key"></label>
        <label>Queue<input name="queueId" type="number" min="0" style="width:70px"></label><label>Offset<input name="offset" type="number" min="0" style="width:90px"></label>
        <label>From<input name="begin" type="datetime-local" step="1"></label><label>To<input name="end" type="datetime-local" step="1"></label>
        <label>Body as<select name="view"><option value="text">text</option><option value="json">JSON</option><option value="hex">hex</option></select></label>
        <button>Search</button></form><div id="results"></div>`;
  },

  async store() {
    const s = await api('/api/store');
    const cl = s.commitLog;
    return `<h1>Store</h1>
      <div class="cards">${card('Disk used by the store', fmtBytes(s.diskBytes))}${card('Flush behind', fmtBytes(s.flushBehindBytes), 'flush-behind')}${card('Dispatch behind', fmtBytes(s.dispatchBehindBytes), 'dispatch-behind')}${card('Flush type', esc(s.flushDiskType))}${s.recovery ? card('Last recovery', `${fmtNum(s.recovery.durationMs)} ms`) : ''}</div>
      <h2>CommitLog <span class="muted">${esc(cl.dir)} · offsets ${fmtNum(cl.minOffset)} – ${fmtNum(cl.maxOffset)} · flushed ${fmtNum(cl.flushedOffset)}</span></h2>
      ${table(['Segment', 'From offset', 'Size', 'On disk', 'Modified'], cl.segments.map((f) => [esc(f.name), fmtNum(f.fromOffset), fmtBytes(f.sizeBytes), fmtBytes(f.diskBytes), fmtTime(f.modifiedMs)]), [1, 2, 3])}
      <h2>ConsumeQueues</h2>${table(['Queues', 'Files', 'On disk'], [[fmtNum(s.consumeQueue.queues), fmtNum(s.consumeQueue.files), fmtBytes(s.consumeQueue.diskBytes)]], [0, 1, 2])}
      <h2>Index files</h2>${table(['File', 'Size', 'On disk', 'Modified'], s.index.files.map((f) => [esc(f.name), fmtBytes(f.sizeBytes), fmtBytes(f.diskBytes), fmtTime(f.modifiedMs)]), [1, 2])}
      <h2>Retention</h2>${table(['fileReservedTime', 'deleteWhen', 'diskMaxUsedSpaceRatio', 'diskSpaceCleanForciblyRatio', 'diskSpaceWarningLevelRatio'], [[`${s.retention.fileReservedTimeHours} h`, esc(s.retention.deleteWhen), `${s.retention.diskMaxUsedSpaceRatio} %`, `${s.retention.diskSpaceCleanForciblyRatio} %`, `${s.retention.diskSpaceWarningLevelRatio} %`]])}`;
  },

  async ha() {
    const h = await api('/api/ha');
    if (!h.available) return `<h1>HA</h1><p>Role <b data-testid="ha-role">${esc(h.role)}</b>. Replication is not running: ${esc(h.reason)}</p>`;
    const conns = h.haConnectionInfo || [];
    return `<h1>HA</h1><div class="cards">${card('Role', `<span data-testid="ha-role">${esc(h.role)}</span>`)}${card('Master max offset', fmtNum(h.masterCommitLogMaxOffset))}${card('In-sync slaves', fmtNum(h.inSyncSlaveNums))}</div>
      ${h.master ? table(['Slave', 'Ack offset', 'Lag (bytes)', 'In sync'], conns.map((c) => [esc(c.addr), fmtNum(c.slaveAckOffset), fmtNum(c.diff), c.inSync ? 'yes' : 'no']), [1, 2])
        : table(['Master', 'Max offset', 'Connected'], [[esc(h.haClientRuntimeInfo.masterAddr), fmtNum(h.haClientRuntimeInfo.maxOffset), h.haClientRuntimeInfo.activated ? 'yes' : 'no']])}`;
  },
};

function messageRows(list, view) {
  if (!list.length) return '<p class="muted">No message found.</p>';
  return list.map((m) => {
    const body = view === 'hex' ? m.bodyHex : view === 'json' ? (m.bodyJson ?? '(not JSON)') : m.bodyText;
    const dlq = m.topic.startsWith('%DLQ%') ? `<button data-act="resend" data-group="${esc(m.topic.slice(5))}" data-offset="${m.commitLogOffset}">Resend to the group</button>` : '';
    return `${table(['Message id', 'Unique key', 'Topic', 'Queue', 'Offset', 'Tags', 'Keys', 'Stored', 'Size'], [[esc(m.msgId), esc(m.uniqKey), esc(m.topic), m.queueId, m.queueOffset, esc(m.tags), esc(m.keys), fmtTime(m.storeTimestamp), fmtBytes(m.bodySizeBytes)]])}
      <pre class="body" data-testid="body">${esc(body)}</pre>${dlq}`;
  }).join('<hr>');
}

async function onSubmit(ev) {
  const f = ev.target;
  if (!(f instanceof HTMLFormElement)) return;
  ev.preventDefault();
  const d = Object.fromEntries(new FormData(f));
  clearErrors();
  try {
    if (f.id === 'topic-form') {
      await api('/api/topics', { method: 'POST', body: JSON.stringify({ topic: d.topic, readQueueNums: Number(d.readQueueNums), writeQueueNums: Number(d.writeQueueNums), perm: Number(d.perm) }) });
      return render();
    }
    if (f.dataset.reset) {
      const ts = d.time ? new Date(d.time).getTime() : Date.now();
      if (!confirm(`Reset ${f.dataset.reset} on ${d.topic} to ${new Date(ts).toISOString()}?`)) return;
      await api(`/api/groups/${encodeURIComponent(f.dataset.reset)}/reset`, { method: 'POST', body: JSON.stringify({ topic: d.topic, timestampMs: ts }) });
      return render();
    }
    if (f.id === 'msg-form') {
      const q = new URLSearchParams();
      if (d.topic) q.set('topic', d.topic);
      if (d.by === 'key') q.set('key', d.key);
      else if (d.by === 'msgId') q.set('msgId', d.key);
      else if (d.by === 'queue') { q.set('queueId', d.queueId); q.set('offset', d.offset); }
      else { q.set('beginMs', d.begin ? String(new Date(d.begin).getTime()) : '0'); q.set('endMs', d.end ? String(new Date(d.end).getTime()) : String(Date.now())); }
      // the previous search's messages must not stay on screen under this search's error
      document.getElementById('results').innerHTML = '';
      const list = await api(`/api/messages?${q}`);
      document.getElementById('results').innerHTML = messageRows(list, d.view);
    }
  } catch (e) {
    showError(e);
  }
}

async function onClick(ev) {
  const b = ev.target.closest('button[data-act]');
  if (!b) return;
  clearErrors();
  try {
    if (b.dataset.act === 'delete') {
      if (!confirm(`Delete topic ${b.dataset.topic}?`)) return;
      await api(`/api/topics/${encodeURIComponent(b.dataset.topic)}`, { method: 'DELETE' });
      return render();
    }
    if (b.dataset.act === 'perm') {
      const t = (await api('/api/topics')).find((x) => x.topic === b.dataset.topic);
      await api('/api/topics', { method: 'POST', body: JSON.stringify({ topic: t.topic, readQueueNums: t.readQueueNums, writeQueueNums: t.writeQueueNums, perm: Number(b.dataset.perm) }) });
      return render();
    }
    if (b.dataset.act === 'resend') {
      const r = await api('/api/messages/resend', { method: 'POST', body: JSON.stringify({ group: b.dataset.group, commitLogOffset: Number(b.dataset.offset) }) });
      b.replaceWith(Object.assign(document.createElement('span'), { textContent: `resent to ${r.topic} at offset ${r.queueOffset}` }));
    }
  } catch (e) {
    showError(e);
  }
}

/** Removes the error banners of earlier actions: each submit or button shows only its own. */
function clearErrors() {
  for (const el of main.querySelectorAll(':scope > .error')) el.remove();
}

function showError(e) {
  const div = document.createElement('div');
  div.className = 'error';
  div.textContent = e.message;
  main.prepend(div);
}

async function updateState() {
  try {
    const s = await api('/api/status');
    if (s.state === 'recovering') {
      const p = s.recovery;
      stateBadge.textContent = 'recovering';
      stateBadge.className = 'state recovering';
      const pct = p && p.totalBytes > 0 ? (100 * p.scannedBytes) / p.totalBytes : 0;
      main.innerHTML = `<h1>The broker is recovering its store</h1>${p ? `<p>${esc(p.phase)}: ${fmtBytes(p.scannedBytes)} of ${fmtBytes(p.totalBytes)} (${pct.toFixed(1)} %), ${fmtBytes(p.bytesPerSecond)}/s${p.etaMs !== null ? `, about ${Math.ceil(p.etaMs / 1000)} s left` : ''}</p><div class="progress"><div style="width:${pct.toFixed(1)}%"></div></div>` : ''}`;
      return false;
    }
    stateBadge.textContent = 'running';
    stateBadge.className = 'state';
    return true;
  } catch (e) {
    stateBadge.textContent = 'unreachable';
    stateBadge.className = 'state recovering';
    return false;
  }
}

let rendering = 0;
async function render() {
  const id = ++rendering;
  const page = (location.hash.replace(/^#\//, '') || 'cluster').split('?')[0];
  for (const a of document.querySelectorAll('nav a')) a.classList.toggle('active', a.dataset.page === page);
  if (!(await updateState())) return;
  try {
    const html = await (pages[page] || pages.cluster)();
    if (id === rendering) main.innerHTML = html;
    main.dataset.loaded = page;
  } catch (e) {
    main.innerHTML = '';
    showError(e);
  }
}

main.addEventListener('submit', onSubmit);
main.addEventListener('click', onClick);
window.addEventListener('hashchange', render);
setInterval(() => { if (location.hash !== '#/messages' && !document.activeElement?.closest('form')) render(); }, 10000);
render();
