"""REST clients for gene descriptions and sequences: NCBI E-utilities, Ensembl and UniProt."""

from model_adapters.clients.base import FetchError, HttpClient
from model_adapters.clients.ensembl import EnsemblClient
from model_adapters.clients.ncbi import NCBIClient
from model_adapters.clients.uniprot import UniProtClient

__all__ = ["EnsemblClient", "FetchError", "HttpClient", "NCBIClient", "UniProtClient"]
