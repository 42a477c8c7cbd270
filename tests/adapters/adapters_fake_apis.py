"""A 127.0.0.1 server answering like NCBI E-utilities, Ensembl REST and UniProt REST.

Bodies follow each API's true format (esummary JSON, Ensembl text/plain sequences and lookup JSON,
UniProt FASTA, Ensembl's 400 "not found" JSON). `plan` scripts failures per path prefix:
429 with Retry-After, 5xx, or a body cut short of its Content-Length.
"""

from __future__ import annotations

import json
import threading
import urllib.parse
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# Real identifiers; sequences are the first residues of UniProt P04637 / P00533 and made-up DNA.
PROTEINS = {
    "P04637": (
        "MEEPQSDPSVEPPLSQETFSDLWKLLPENNVLSPLPSQAMDDLMLSPDDIEQWFTEDPGPDEAPRMPEAAPPVAPAPAAPTPAAPAPAPSWPLSSSVPSQ"
        "KTYQGSYGFRLGFLHSGTAKSVTCTYSPALNKMFCQLAKTCPVQLWVDSTPPPGTRVRAMAIYKQSQHMTEVVRRCPHHERCSDSDGLAPPQHLIRVEGN"
        "LRVEYLDDRNTFRHSVVVPYEPPEVGSDCTTIHYNYMCNSSCMGGMNRRPILTIITLEDSSGNLLGRNSFEVRVCACPGRDRRTEEENLRKKGEPHHELP"
        "PGSTKRALPNNTSSSPQPKKKPLDGEYFTLQIRGRERFEMFRELNEALELKDAQAGKEPGGSRAHSSHLKSKKGQSTSRHKKLMFKTEGPDSD"
    ),
    "P00533": (
        "MRPSGTAGAALLALLAALCPASRALEEKKVCQGTSNKLTQLGTFEDHFLSLQRMFNNCEVVLGNLEITYVQRNYDLSFLKTIQEVAGYVLIALNTVERIP"
        "LENLQIIRGNMYYENSYALAVLSNYDANKTGLKELPMRNLQEILHGAVRFSNNPALCNVESIQWRDIVSSDFLSNMSMDFQNHLGSCQKCDPSCPNGSCW"
        "GAGEENCQKLTKIICAQQCSGRCRGKSPSDCCHNQCAAGCTGPRESDCLVCRKFRDEATCKDTCPPLMLYNPTTYQMDVNPEGKYSFGATCVKKCPRNYV"
        "VTDHGSCVRACGADSYEMEEDGVRKCKKCEGPCRKVCNGIGIGEFKDSLSINATNIKHFKNCTSISGDLHILPVAFRGDSFTHTPPLDPQELDILKTVKE"
        "ITGFLLIQAWPENRTDLHAFENLEIIRGRTKQHGQFSLAVVSLNITSLGLRSLKEISDGDVIISGNKNLCYANTINWKKLFGTSGQKTKIISNRGENSCK"
        "ATGQVCHALCSPEGCWGPEPRDCVS"
    ),
}
GENOMIC = {"ENSG00000141510": "ACGTACGTTTGACCA" * 20, "ENSG00000146648": "GGGCCCAAATTT" * 3}
LOOKUP = {
    gene: {"id": gene, "biotype": "protein_coding", "canonical_transcript": transcript}
    for gene, transcript in (("ENSG00000141510", "ENST00000269305.9"), ("ENSG00000146648", "ENST00000275493.7"))
}
CDS = {"ENST00000269305": "ATGGAGGAGCCGCAGTCAGATCCTAGC", "ENST00000275493": "ATGCGACCCTCCGGGACGGCC"}
SUMMARIES = {
    "7157": ("TP53", "tumor protein p53", "This gene encodes a tumor suppressor protein."),
    "1956": ("EGFR", "epidermal growth factor receptor", "The protein encoded by this gene is a transmembrane "
             "glycoprotein."),
}


class FakeApis:
    """Run the server in a thread. `url(api)` is the base URL to give a client."""

    def __init__(self) -> None:
        self.requests: Counter[str] = Counter()
        self.plans: dict[str, list[tuple]] = {}
        handler = type("Handler", (_Handler,), {"apis": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, api: str) -> str:
        """Base URL of one fake API: "ncbi", "ensembl" or "uniprot"."""
        return f"http://127.0.0.1:{self.server.server_port}/{api}"

    def plan(self, prefix: str, *responses: tuple) -> None:
        """Answer the next requests under `prefix` with (status, headers) or ("truncated",) before the real one."""
        self.plans[prefix] = list(responses)

    def reset(self) -> None:
        """Forget requests and plans."""
        self.requests.clear()
        self.plans.clear()

    def close(self) -> None:
        """Stop the server."""
        self.server.shutdown()
        self.server.server_close()


class _Handler(BaseHTTPRequestHandler):
    apis: FakeApis

    def log_message(self, *args) -> None:  # keep test output quiet
        pass

    def _send(self, status: int, body: bytes, content_type: str, headers: dict | None = None,
              length: int | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(length if length is not None else len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        parsed = urllib.parse.urlparse(self.path)
        query = dict(urllib.parse.parse_qsl(parsed.query))
        self.apis.requests[parsed.path] += 1
        for prefix, responses in self.apis.plans.items():
            if parsed.path.startswith(prefix) and responses:
                planned = responses.pop(0)
                if planned[0] == "truncated":
                    return self._send(200, b">sp|P04637|P53_HUMAN\nMEEPQ", "text/plain", length=500)
                status, headers = planned
                return self._send(status, json.dumps({"error": f"HTTP {status}"}).encode(), "application/json",
                                  headers)
        api, _, rest = parsed.path.strip("/").partition("/")
        route = getattr(self, f"_{api}", None)
        if route is None:
            return self._send(404, b"not found", "text/plain")
        return route(rest, query)

    def _ncbi(self, rest: str, query: dict) -> None:
        ids = query.get("id", "").split(",")
        result: dict = {"uids": ids}
        for uid in ids:
            if uid in SUMMARIES:
                name, description, summary = SUMMARIES[uid]
                result[uid] = {"uid": uid, "name": name, "description": description, "summary": summary}
            else:
                result[uid] = {"uid": uid, "error": "cannot get document summary"}
        body = {"header": {"type": "esummary", "version": "0.3"}, "result": result}
        self._send(200, json.dumps(body).encode(), "application/json")

    def _ensembl(self, rest: str, query: dict) -> None:
        kind, _, identifier = rest.rpartition("/")
        if kind == "lookup/id" and identifier in LOOKUP:
            return self._send(200, json.dumps(LOOKUP[identifier]).encode(), "application/json")
        table = CDS if query.get("type") == "cds" else GENOMIC
        if kind == "sequence/id" and identifier in table:
            return self._send(200, table[identifier].encode(), "text/plain")
        self._send(400, json.dumps({"error": f"ID '{identifier}' not found"}).encode(), "application/json")

    def _uniprot(self, rest: str, query: dict) -> None:
        accessions = query.get("accessions", "").split(",")
        fasta = "".join(
            f">sp|{a}|X_HUMAN Protein OS=Homo sapiens OX=9606\n"
            + "\n".join(PROTEINS[a][i:i + 60] for i in range(0, len(PROTEINS[a]), 60)) + "\n"
            for a in accessions if a in PROTEINS
        )
        self._send(200, fasta.encode(), "text/plain;format=fasta")
