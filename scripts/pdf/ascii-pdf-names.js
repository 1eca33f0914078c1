'use strict'
// Antora extension (antora-playbook.yml, after @antora/pdf-extension): each edition's PDF
// gets an ASCII file name. Antora Assembler names a PDF after its edition's title, so the
// Japanese one was tr-4947-netapp-nfs-上の-kafka.pdf, a name that some download tools,
// mail gateways and shells mangle. Characters outside ASCII are dropped from the name
// (tr-4947-netapp-nfs-kafka.pdf); each edition's antora.yml links its PDF by that name
// (page-pdf).
function asciiName (path) {
  const slash = path.lastIndexOf('/') + 1
  const name = path.slice(slash).normalize('NFKD').replace(/[^\x20-\x7e]/g, '')
    .replace(/-{2,}/g, '-').replace(/^-|-(?=\.pdf$)/g, '')
  return path.slice(0, slash) + name
}

module.exports.asciiName = asciiName
module.exports.register = function () {
  this.on('beforePublish', ({ siteCatalog }) => {
    for (const file of siteCatalog.getFiles()) {
      const out = file.out && file.out.path
      if (!out || !out.endsWith('.pdf') || /^[\x20-\x7e]*$/.test(out)) continue
      file.out = Object.assign({}, file.out, { path: asciiName(out) })
      if (file.pub && file.pub.url) file.pub = Object.assign({}, file.pub, { url: asciiName(file.pub.url) })
    }
  })
}
